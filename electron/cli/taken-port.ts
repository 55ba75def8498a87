/**
 * Who holds a port a command was asked to listen on, in one line for its error: this very Tally's own webhook
 * receiver (`tally serve --port 8787` while the receiver's default is 8787), another Tally on this data folder (its
 * run file and control socket say which face and which port), or, where the OS says, another program (Linux
 * /proc). A trial as a new user met "Port 8787 is already in use" with no word of who held it.
 */
import { ConfigError } from '../core/errors.js';
import { listRunning } from '../core/receive/control.js';
import { findPortHolder } from '../core/receive/port-holder.js';

const FACE = { app: 'the tray app', serve: 'tally serve', listen: 'tally listen', follow: 'tally follow' } as const;

/** Who holds `port`, as words after "held by", or null when nobody can tell. */
export async function whoHoldsPort(
  port: number,
  opts: { home: string; ownReceiverPort?: number | null; pid?: number },
): Promise<string | null> {
  const pid = opts.pid ?? process.pid;
  if (opts.ownReceiverPort === port) return `this Tally's own webhook receiver (the receiverPort setting)`;
  // Another Tally of this data folder: its control socket answers with its health, which names its receiver port.
  for (const r of await listRunning(opts.home).catch(() => [])) {
    if (r.info.pid === pid || !('health' in r)) continue;
    if (r.health.receiver.port === port) return `the webhook receiver of ${FACE[r.info.face]} (process ${r.info.pid})`;
  }
  const holder = await findPortHolder(port).catch(() => null);
  if (!holder) return null;
  if (holder.pid === pid) return 'this Tally';
  return holder.tally
    ? `another Tally (${holder.tally}, process ${holder.pid})`
    : `${holder.program} (process ${holder.pid})`;
}

/**
 * The error of a server that could not listen on `port` because it is taken: the port, its holder when known, and
 * the flag that chooses another. Other errors are returned as they are.
 */
export async function explainTakenPort(
  error: unknown,
  flag: string,
  opts: { home: string; ownReceiverPort?: number | null; what: string },
): Promise<unknown> {
  const e = error as NodeJS.ErrnoException & { port?: number };
  if (e?.code !== 'EADDRINUSE' || typeof e.port !== 'number') return error;
  const holder = await whoHoldsPort(e.port, opts);
  const held = holder ? `is taken by ${holder}` : 'is already in use by another program';
  return new ConfigError(
    `Port ${e.port} for ${opts.what} ${held}: choose another with ${flag} <port>, or leave ${flag} out for a free one.`,
  );
}
