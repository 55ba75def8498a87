/**
 * The JSON shapes the core hands to every face as they are: a channel as `tally live --json` prints it and the
 * popover lists it, and a tunnel's status as the supervisor reports it. Declared once here; the contract
 * re-exports them to the renderer (as `ChannelView`, and as the base of its `TunnelStatus`), so this file is
 * browser-safe like core/notes.ts: it imports nothing but notes' types.
 */
import type { Note } from './notes.js';

/** A channel in JSON: dates as ISO strings, the channel ID as `id` (model.ts `channelToJson` makes it). */
export interface ChannelJson {
  id: string;
  serviceId: string | null;
  state: 'live' | 'ended';
  createdAt: string;
  endedAt: string | null;
  durationSeconds: number | null;
  watchers: number | null;
  cumulativeSessions: number | null;
}

/** How the receiver is reached from the internet (the `provider` setting). */
export type TunnelKind = 'none' | 'url' | 'ngrok' | 'localtunnel';

/** What the tunnel supervisor knows about the public URL. */
export interface TunnelStatus {
  provider: TunnelKind;
  state: 'off' | 'connecting' | 'reachable' | 'unreachable' | 'error';
  /** Public webhook URL to paste into the console (with its token), when known. */
  publicUrl: string | null;
  /** Local webhook URL (loopback). */
  localUrl: string | null;
  /** Web SDK `recordUrl` for client audio uploads, when known. */
  uploadUrl: string | null;
  lastCheckedAt: string | null;
  message: string | null;
  /** `message` as notes the popover translates (see notes.ts). */
  messageNotes?: Note[] | null;
  /** Whether the current public URL is the one registered with the service. */
  registered: boolean;
  /**
   * Whether a web page can upload client recordings through the public URL, checked as a browser would (CORS
   * preflight, browser User-Agent, no tunnel bypass header): `off` when there is nothing to check (uploads off,
   * no public URL, no allowed page origin), `blocked` when the tunnel shows browsers a page of its own.
   */
  uploads: 'ok' | 'blocked' | 'off';
  /** Why, and what to do (null before the first check). */
  uploadsMessage: string | null;
  uploadsNotes?: Note[] | null;
}

/**
 * A tunnel with nothing open: no public URL, nothing checked, said or registered, uploads off. What the supervisor
 * starts from, and the view while no receiver runs; the caller adds what it knows.
 */
export function tunnelOff(provider: TunnelKind, localUrl: string | null = null): TunnelStatus {
  return {
    provider,
    state: 'off',
    publicUrl: null,
    localUrl,
    uploadUrl: null,
    lastCheckedAt: null,
    message: null,
    messageNotes: null,
    registered: false,
    uploads: 'off',
    uploadsMessage: null,
  };
}
