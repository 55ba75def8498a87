/**
 * The port policy (see receive-service.ts): where the public address follows the receiver's port it may move to
 * a free one; where it is fixed it never moves. And how a port's holder is named in the lines that say so.
 */
import type { PortHolder } from './port-holder.js';

/**
 * The port policy's one rule: the public address follows the receiver's port with ngrok and localtunnel (they
 * forward to whatever port they are given) and with no tunnel in demo mode (the sandbox is pointed at the local
 * URL); an own URL (a reverse proxy forwards to a fixed port) or no tunnel with the real service never moves.
 */
export function portFollowsAddress(provider: string, demo: boolean): boolean {
  return provider === 'ngrok' || provider === 'localtunnel' || (provider === 'none' && demo);
}

/** " by <program> (process <pid>)", or "" when the OS did not say who holds the port. */
export function holderText(holder: PortHolder | null): string {
  if (!holder) return '';
  return holder.tally
    ? ` by another Tally (${holder.tally}, process ${holder.pid})`
    : ` by ${holder.program} (process ${holder.pid})`;
}
