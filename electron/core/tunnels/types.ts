/**
 * Shared shapes for the tunnel providers that expose the loopback webhook receiver to the internet.
 * A provider exposes the whole local port; callers append `/hooks/<token>` (and the self-check path) to
 * `publicBaseUrl` themselves, so no provider ever sees the webhook token.
 */
import { EventEmitter } from 'node:events';
import type { Note } from '../notes.js';
import { TallyError } from '../errors.js';

import type { TunnelKind, TunnelStatus } from '../view-shapes.js';

/**
 * `TunnelKind` is how the receiver is reached (the `provider` setting); `TunnelStatus` what the supervisor knows
 * about the public URL. Both are declared once in core/view-shapes.ts: the app hands the status to the contract
 * (app/tunnel-view.ts), adding what only the app knows (a refused restart).
 */
export type { TunnelKind, TunnelStatus };

/** One of `TunnelStatus['state']`: off | connecting | reachable | unreachable | error. */
export type TunnelState = TunnelStatus['state'];

/** The loopback address the receiver listens on. */
export interface LocalTarget {
  host: string;
  port: number;
}

export interface TunnelOpenResult {
  /** Public origin (plus any path prefix), without a trailing slash; null when the provider is local only. */
  publicBaseUrl: string | null;
  /** Something the producer should know even though the tunnel works (e.g. plain http on a LAN). */
  warning?: string;
  /** `warning` as a note the popover translates (without one, the English text is shown as it is). */
  warningNote?: Note;
}

/** Events a provider emits while open. Neither fires after `close()` was called. */
export interface TunnelProviderEvents {
  /** The tunnel went away without being asked to (server dropped it, session lost). */
  closed: [reason: string | Note];
  /** The tunnel is broken; the supervisor treats it like `closed` and reconnects. */
  error: [error: Error];
}

/**
 * A way to make `local` reachable from the internet. `open` may be called again after `close` (the
 * supervisor reuses one provider across reconnects). Secrets a provider holds never appear in its
 * errors, events or `JSON.stringify` output.
 */
export interface TunnelProvider {
  readonly kind: TunnelKind;
  open(local: LocalTarget, signal?: AbortSignal): Promise<TunnelOpenResult>;
  close(): Promise<void>;
  on<E extends keyof TunnelProviderEvents>(event: E, listener: (...args: TunnelProviderEvents[E]) => void): this;
  off<E extends keyof TunnelProviderEvents>(event: E, listener: (...args: TunnelProviderEvents[E]) => void): this;
}

/** Base class giving providers the typed `on`/`off`/`emit` pair. */
export abstract class TunnelProviderBase extends EventEmitter<TunnelProviderEvents> implements TunnelProvider {
  abstract readonly kind: TunnelKind;
  abstract open(local: LocalTarget, signal?: AbortSignal): Promise<TunnelOpenResult>;
  abstract close(): Promise<void>;

  constructor() {
    super();
    // An 'error' with no listener would crash the process; a provider used without a supervisor must not.
    this.on('error', () => {});
  }
}

/** A tunnel could not be opened or broke. `providerCode` is the provider's own code (e.g. ERR_NGROK_334). */
export class TunnelError extends TallyError {
  readonly code = 'tunnel';
  constructor(
    message: string | Note,
    readonly providerCode: string | null = null,
  ) {
    super(message);
  }
}

/** Throws the signal's reason (or an AbortError) when it is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  return error;
}

/** `host:port` with IPv6 literals bracketed, as tunnel clients expect an address. */
export function hostPort(local: LocalTarget): string {
  const host = local.host.includes(':') && !local.host.startsWith('[') ? `[${local.host}]` : local.host;
  return `${host}:${local.port}`;
}
