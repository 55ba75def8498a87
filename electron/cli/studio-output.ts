/**
 * What `tally follow` prints, and the studio lines of `tally listen --team`: NDJSON (one object per line) for
 * scripts, short lines for people, in the same style as `tally listen`.
 */
import type { MemberReady, MirrorFailed, MirrorProgressed, RecordingMirrored } from '../core/receive/member-events.js';
import type { RecordingShared } from '../core/receive/receive-events.js';
import { KeyedThrottle } from '../core/throttle.js';
import type { Clock } from '../core/time.js';
import { clockTime, formatBytes, terminalSafe } from './output.js';

const clock = clockTime;

export interface StudioPrinter {
  ready(info: MemberReady): void;
  waiting(info: { message: string; delayMs: number }): void;
  connection(state: 'disconnected' | 'reconnected'): void;
  progress(p: MirrorProgressed): void;
  saved(e: RecordingMirrored): void;
  failed(info: MirrorFailed): void;
  connected(url: string): void;
  /** The receiver's team server refused the credentials or the TLS: one line, once per reason. */
  refused(info: { message: string; retryInMs: number }): void;
  published(e: RecordingShared): void;
  /** Recordings that expired from the team server before this member could mirror them (learned once, back). */
  missed(recordings: readonly { identity: string; channelId: string }[]): void;
  /** A studio warning (its line already went to stderr through the log): an NDJSON event for scripts. */
  warning(w: { kind: string; message: string }): void;
  stopping(): void;
  stopped(): void;
}

const PROGRESS_EVERY_MS = 1_000;

export function createStudioPrinter(opts: {
  out: { write(text: string): unknown };
  err: NodeJS.WritableStream;
  ndjson: boolean;
  prefix: string;
  /** The monotonic clock of the progress throttle (core/time.ts's by default). */
  clock?: Pick<Clock, 'now'>;
}): StudioPrinter {
  const json = (obj: Record<string, unknown>) => opts.out.write(`${JSON.stringify(obj)}\n`);
  const line = (text: string) => opts.out.write(`${clock()} ${terminalSafe(text)}\n`);
  const progress = new KeyedThrottle(PROGRESS_EVERY_MS, opts.clock);
  return {
    ready(info) {
      if (opts.ndjson) json({ type: 'ready', name: info.name, team: info.url, folder: info.folder });
      else line(`following the studio at ${info.url} as "${info.name}" into ${info.folder}`);
    },
    waiting(info) {
      // Always one line on stderr, so it is seen even when stdout goes to a script.
      opts.err.write(
        `${opts.prefix}: ${info.message} Trying again in ${Math.max(1, Math.round(info.delayMs / 1000))} s.\n`,
      );
      if (opts.ndjson) json({ type: 'waiting', message: info.message, retryInMs: info.delayMs });
    },
    connection(state) {
      if (opts.ndjson) json({ type: 'connection', state });
      else line(state === 'disconnected' ? 'team server connection lost; reconnecting' : 'team server reconnected');
    },
    progress(p) {
      if (!progress.pass(p.identity, p.bytes >= p.totalBytes)) return;
      if (opts.ndjson)
        json({
          type: 'progress',
          channelId: p.channelId,
          identity: p.identity,
          bytes: p.bytes,
          totalBytes: p.totalBytes,
        });
    },
    saved(e) {
      progress.forget(e.identity);
      if (opts.ndjson)
        json({
          type: 'saved',
          channelId: e.channelId,
          identity: e.identity,
          kind: e.kind,
          path: e.path,
          bytes: e.bytes,
        });
      else line(`saved     ${e.channelId} → ${e.path} (${formatBytes(e.bytes)}, verified)`);
    },
    failed(info) {
      if (!info.willRetry) progress.forget(info.identity);
      if (opts.ndjson) json({ type: 'failed', ...info });
      else line(`failed    ${info.channelId}: ${info.message}${info.willRetry ? ' (retrying)' : ''}`);
    },
    connected(url) {
      if (opts.ndjson) json({ type: 'team', state: 'connected', team: url });
      else line(`studio: connected to ${url}; saved recordings are shared with the team`);
    },
    refused(info) {
      const wait = Math.max(1, Math.round(info.retryInMs / 60_000));
      opts.err.write(
        `${opts.prefix}: ${info.message} Recordings are still received and saved here, and shared once the team server lets this computer in (next try in ${wait} min, with the credentials as they are then).\n`,
      );
      if (opts.ndjson) json({ type: 'team', state: 'refused', message: info.message, retryInMs: info.retryInMs });
    },
    published(e) {
      if (opts.ndjson)
        json({ type: 'published', channelId: e.channelId, identity: e.identity, kind: e.kind, bytes: e.bytes });
      else line(`shared    ${e.channelId} with the team (${formatBytes(e.bytes)}, verified)`);
    },
    missed(recordings) {
      if (opts.ndjson) {
        const list = recordings.map((r) => ({ identity: r.identity, channelId: r.channelId }));
        json({ type: 'missed', recordings: list });
      } else {
        const channels = recordings.map((r) => r.channelId).join(', ');
        line(`missed    ${recordings.length} expired from the team server before they could be mirrored: ${channels}`);
      }
    },
    warning(w) {
      if (opts.ndjson) json({ type: 'warning', kind: w.kind, message: w.message });
    },
    stopping() {
      if (opts.ndjson) json({ type: 'stopping' });
      else line('stopping: unfinished transfers resume on the next start.');
    },
    stopped() {
      if (opts.ndjson) json({ type: 'stopped' });
      else line('stopped.');
    },
  };
}
