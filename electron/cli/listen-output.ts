/**
 * What `tally listen` prints: either NDJSON (one object per line, for scripts) or lines for people, with a
 * progress bar that redraws in place on a terminal and steps every 25 % when piped to a file.
 */
import type { HealthView } from '../contract.js';
import type {
  ChannelChanged,
  DownloadFailed,
  DownloadProgressed,
  MissedWhileAway,
  ReceivedRecording,
  ReceiveReady,
  RecordingExpired,
  RecordingOverdue,
  RecordingSaved,
  RefusedRequest,
  TunnelChanged,
  UploadSaved,
} from '../core/receive/receive-events.js';
import type { ReceiveService } from '../core/receive/receive-service.js';
import { redactSecrets } from '../core/redact.js';
import { KeyedThrottle } from '../core/throttle.js';
import { systemClock, type Clock } from '../core/time.js';
import { clockTime, formatBytes, formatDuration, terminalSafe } from './output.js';
import { counted } from '../core/counted.js';

/**
 * What a saved recording was checked against, said plainly: "verified" only with a checksum or two identical
 * downloads; a size alone says "size only" (issue 20: a size match is not proof of the bytes).
 */
export function verification(checks: readonly string[], job?: Pick<ReceivedRecording, 'announcedBytes'>): string {
  // Saved only because the server kept sending less than announced (issue 31): never "verified".
  if (checks.includes('short')) {
    const of = job?.announcedBytes != null ? ` (${formatBytes(job.announcedBytes)} announced)` : '';
    return `shorter than announced${of}, not verified`;
  }
  if (checks.includes('md5')) return checks.includes('size') ? 'verified: size and MD5' : 'verified: MD5';
  if (checks.includes('repeat')) return 'size + repeat-consistent (the ETag is not an MD5)';
  if (checks.includes('size')) return 'size only (no checksum from the server)';
  return 'not verified (nothing to check it against)';
}

export type UploadedInfo = UploadSaved;

export interface ReadyInfo extends Omit<ReceiveReady, 'uploadUrl'> {
  /** null while the receiver cannot listen (its port is taken: the health line says so). */
  localUrl: string | null;
  uploadUrl?: string | null;
  note: string | null;
  /** The built-in sandbox sends here over loopback: no tunnel needed, so no advice about one. */
  localOnly?: boolean;
  /** With --sandbox: the sandbox service's address (its control API, docs/sandbox.md, is under /_sandbox/). */
  sandboxUrl?: string;
}

export interface ListenPrinter {
  ready(info: ReadyInfo): void;
  received(job: ReceivedRecording, warnings: string[]): void;
  duplicate(job: ReceivedRecording): void;
  rejected(r: RefusedRequest): void;
  progress(p: DownloadProgressed): void;
  saved(e: RecordingSaved): void;
  failed(e: DownloadFailed): void;
  expired(e: RecordingExpired): void;
  uploaded(e: UploadedInfo): void;
  tunnel(s: TunnelChanged): void;
  registered(url: string, channelHookError?: string | null): void;
  channel(call: ChannelChanged): void;
  recordingMissing(missing: RecordingOverdue): void;
  registrationFailed(url: string, message: string): void;
  gaps(report: MissedWhileAway): void;
  /** The health changed: NDJSON prints every change, a terminal the overall state and its reason when they change. */
  health(view: HealthView, previous: HealthView | null): void;
  stopping(): void;
  close(): void;
}

const PROGRESS_EVERY_MS = 500;
const BAR_WIDTH = 24;

/** `[██████████░░░░░░░░░░░░░░]  42%` for a known total, a bouncing block otherwise. */
export function progressBar(bytes: number, total: number | null, width = BAR_WIDTH): string {
  if (!total || total <= 0) {
    const pos = Math.floor(bytes / (1024 * 1024)) % width;
    return `[${'░'.repeat(pos)}█${'░'.repeat(Math.max(0, width - pos - 1))}]   ?%`;
  }
  const ratio = Math.min(1, bytes / total);
  const filled = Math.round(ratio * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}%`;
}

const clock = clockTime;

/**
 * Of each kind of line that repeats in floods (refusals when someone probes the receiver, duplicates when a
 * sender repeats itself, a failing download's retries), at most REPEATS_PER_WINDOW are printed per window; the
 * rest are summed up in one line.
 */
export const REPEATS_PER_WINDOW = 20;
const REPEAT_WINDOW_MS = 10_000;
/** The limited kinds and what their summary counts. */
const REPEATED = {
  rejected: ['request', 'requests'],
  duplicate: ['duplicate webhook', 'duplicate webhooks'],
  failed: ['failed attempt to be retried', 'failed attempts to be retried'],
} as const;
type Repeated = keyof typeof REPEATED;

/**
 * The shortest time between two writes while lines keep coming: a line after a quiet spell goes out at the end
 * of its turn, a burst's lines in one write per window (issue 22: a write per turn was still one system call per
 * journal commit, 4 % of a 4,000-webhook burst on the thread that answers webhooks).
 */
export const OUTPUT_BATCH_MS = 20;

/**
 * Gathers what is written into one write: at the end of the turn, or, within OUTPUT_BATCH_MS of the previous
 * write, at the end of that window. Node writes to a terminal or a pipe synchronously: a line per webhook, in a
 * burst of thousands, was one system call each on the thread that answers webhooks (9 % of `tally listen`'s time
 * in a 4,000-webhook burst, more while the reader of the pipe lags behind). `flush` writes what is gathered at
 * once (before exiting).
 */
export function coalescingWriter(
  out: { write(text: string): unknown },
  batchMs: number = OUTPUT_BATCH_MS,
  clock: Pick<Clock, 'now'> = systemClock,
): { write(text: string): void; flush(): void } {
  let pending: string[] = [];
  let immediate: NodeJS.Immediate | null = null;
  let timer: NodeJS.Timeout | null = null;
  let lastWrite = -Infinity;
  // A timer is due by the event loop's cached time, in whole milliseconds: it can fire a little before the window
  // is over on `clock` (by the rest of the turn it was set in, under load several ms). It waits out the rest.
  const windowOver = (): void => {
    timer = null;
    const wait = lastWrite + batchMs - clock.now();
    if (wait > 0) timer = setTimeout(windowOver, wait);
    else flush();
  };
  const flush = (): void => {
    if (immediate) clearImmediate(immediate);
    if (timer) clearTimeout(timer);
    immediate = null;
    timer = null;
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    lastWrite = clock.now();
    out.write(text);
  };
  return {
    write(text) {
      pending.push(text);
      if (immediate || timer) return;
      const wait = lastWrite + batchMs - clock.now();
      if (wait <= 0) immediate = setImmediate(flush);
      else timer = setTimeout(windowOver, wait);
    },
    flush,
  };
}

export function createListenPrinter(opts: {
  out: { write(text: string): unknown };
  ndjson: boolean;
  tty: boolean;
  folder: string;
  /** The monotonic clock of the progress throttle and the repeat windows (core/time.ts's by default). */
  clock?: Pick<Clock, 'now'>;
  /**
   * A `--sandbox` run: its journal starts afresh at the next start (core/app/demo-leftovers.ts), so nothing it
   * leaves unfinished is resumed, and it never says so.
   */
  sandbox?: boolean;
}): ListenPrinter {
  // `tally listen` and `tally follow` hand in a coalescingWriter and flush it after `close`.
  const out = opts.out;
  const monotonic = opts.clock ?? systemClock;
  /** Progress at most every PROGRESS_EVERY_MS per recording in NDJSON, and a terminal's bar every 100 ms. */
  const progressJson = new KeyedThrottle(PROGRESS_EVERY_MS, monotonic);
  const progressBarShown = new KeyedThrottle(100, monotonic);
  /** Piped output: the last quarter of each recording said. */
  const quarterSaid = new Map<string, number>();
  /** A recording's work ended: its progress keys go. */
  const progressEnded = (key: string): void => {
    progressJson.forget(key);
    progressBarShown.forget(key);
    quarterSaid.delete(key);
  };
  /** Recordings whose "gone from the service" line was printed (once each, whatever the flood around it). */
  const goneSaid = new Set<string>();
  let statusLineOpen = false;

  // Every line but the receiver's own URLs (ready, registered: the producer needs them whole) is redacted: a
  // webhook's URL or an error can carry a signature, a password or a token (issue 32).
  const raw = (obj: Record<string, unknown>) => out.write(`${JSON.stringify(obj)}\n`);
  const json = (obj: Record<string, unknown>) => out.write(`${redactSecrets(JSON.stringify(obj))}\n`);
  const line = (plain: string, redact = true) => {
    const text = redact ? redactSecrets(plain) : plain;
    if (statusLineOpen) {
      out.write('\r\x1b[2K');
      statusLineOpen = false;
    }
    // Everything printed for humans passes here (or through the status line below): webhook fields are hostile.
    out.write(`${clock()} ${terminalSafe(text)}\n`);
  };
  const jobRef = (job: Pick<ReceivedRecording, 'channelId' | 'key'>) => ({ channelId: job.channelId, key: job.key });
  const windows = new Map<Repeated, { start: number; shown: number; hidden: number }>();
  const flushHidden = (kind: Repeated) => {
    const w = windows.get(kind);
    if (!w || w.hidden === 0) return;
    const seconds = REPEAT_WINDOW_MS / 1000;
    if (opts.ndjson) json({ type: `${kind}-summary`, count: w.hidden, windowSeconds: seconds });
    else
      line(
        `${kind.padEnd(9)} ${counted(w.hidden, `more ${REPEATED[kind][0]}`, `more ${REPEATED[kind][1]}`)} in the last ${seconds} s (not shown)`,
      );
    w.hidden = 0;
  };
  /** Whether a line of `kind` is printed now; false when it is only counted for the window's summary. */
  const shows = (kind: Repeated): boolean => {
    const now = monotonic.now();
    let w = windows.get(kind);
    if (!w || now - w.start >= REPEAT_WINDOW_MS) {
      flushHidden(kind);
      w = { start: now, shown: 0, hidden: 0 };
      windows.set(kind, w);
    }
    if (w.shown >= REPEATS_PER_WINDOW) {
      w.hidden += 1;
      return false;
    }
    w.shown += 1;
    return true;
  };

  return {
    ready(info) {
      if (opts.ndjson) {
        raw({
          type: 'ready',
          localUrl: info.localUrl,
          publicUrl: info.publicUrl,
          uploadUrl: info.uploadUrl ?? null,
          folder: opts.folder,
          ...(info.note ? { note: info.note } : {}),
          ...(info.sandboxUrl ? { sandboxUrl: info.sandboxUrl } : {}),
        });
        return;
      }
      const lines = [
        info.localUrl
          ? 'Tally is listening for recordings.'
          : 'Tally is running, but cannot receive webhooks yet (see the health line).',
      ];
      if (info.publicUrl) lines.push(`  Webhook URL (paste into the console): ${info.publicUrl}`);
      else if (!info.localOnly && info.localUrl)
        lines.push(
          '  No public URL: the service can only reach this receiver through a tunnel (--tunnel ngrok,',
          '  --tunnel localtunnel or --tunnel https://your.public.host).',
        );
      if (info.localUrl) lines.push(`  Local webhook URL: ${info.localUrl}`);
      lines.push(`  Saving to: ${opts.folder}`);
      if (info.uploadUrl) lines.push(`  Web client recordUrl: ${info.uploadUrl}`);
      if (info.uploadUrl && info.uploadOrigins.length === 0) {
        lines.push('  No web app origin may upload yet: add one with --upload-origin https://app.example.');
      }
      if (info.note) lines.push(`  ${info.note}`);
      lines.push(
        opts.sandbox
          ? 'Press Ctrl+C to stop; each sandbox run starts afresh, so its unfinished downloads are not resumed.'
          : 'Press Ctrl+C to stop; unfinished downloads resume on the next start.',
        '',
      );
      out.write(lines.map(terminalSafe).join('\n') + '\n');
    },
    received(job, warnings) {
      if (opts.ndjson) {
        json({
          type: 'received',
          ...jobRef(job),
          url: job.url,
          announcedBytes: job.announcedBytes,
          shape: job.shape,
          deadline: job.deadline,
          // The same recording came before in the other webhook form: both jobs are kept, one file is saved.
          ...(job.twin !== undefined ? { sameRecordingAs: job.twin } : {}),
          // A new recording under a URL already saved (a reused channel ID, issue 31): saved beside that one.
          ...(job.follows !== undefined ? { newRecordingAfter: job.follows } : {}),
          ...(warnings.length ? { warnings } : {}),
        });
        return;
      }
      const size = job.announcedBytes === null ? '' : ` (${formatBytes(job.announcedBytes)} announced)`;
      const twin =
        job.twin !== undefined
          ? ' (also announced in the other webhook form: saved once)'
          : job.follows !== undefined
            ? ' (a new recording under the URL of one already saved: saved beside it)'
            : '';
      line(`received  ${job.channelId}${size}${twin}${warnings.length ? ` (ignored: ${warnings.join('; ')})` : ''}`);
    },
    duplicate(job) {
      if (!shows('duplicate')) return;
      if (opts.ndjson) json({ type: 'duplicate', ...jobRef(job) });
      else line(`duplicate ${job.channelId} (already known, not downloaded again)`);
    },
    rejected(r) {
      // A channel parsed from X-FILENAME means the request came through the upload route's secret token: a real
      // client recording was lost, and which one must show however busy the window (and it cannot be a probe flood).
      const lostRecording = typeof r.upload?.channelId === 'string' || r.channelId !== undefined;
      if (!lostRecording && !shows('rejected')) return;
      const upload = r.upload
        ? { channelId: r.upload.channelId, track: r.upload.track, fileName: r.upload.fileName, origin: r.upload.origin }
        : {};
      const hook = r.channelId !== undefined ? { channelId: r.channelId } : {};
      if (opts.ndjson) {
        json({
          type: 'rejected',
          status: r.status,
          reason: r.reason,
          remoteAddress: r.remoteAddress,
          ...hook,
          ...upload,
        });
        return;
      }
      const what = r.upload?.channelId
        ? ` channel ${r.upload.channelId}${r.upload.track ? ` (${r.upload.track} stream)` : ''}:`
        : r.channelId !== undefined
          ? ` channel ${r.channelId}:`
          : '';
      line(`rejected  ${r.status}${what} ${r.reason} (from ${r.remoteAddress})`);
    },
    progress(p) {
      const done = p.total !== null && p.bytes >= p.total;
      if (opts.ndjson) {
        if (!progressJson.pass(p.key, done)) return;
        json({
          type: 'progress',
          channelId: p.channelId,
          key: p.key,
          bytes: p.bytes,
          total: p.total,
          rate: Math.round(p.rate),
          etaSeconds: p.etaSeconds,
          deadline: p.deadline,
        });
        return;
      }
      const eta = p.etaSeconds === null ? '' : ` ETA ${formatDuration(p.etaSeconds * 1000)}`;
      const text = `${progressBar(p.bytes, p.total)} ${p.channelId} ${formatBytes(p.bytes)} ${formatBytes(p.rate)}/s${eta}`;
      if (opts.tty) {
        if (!progressBarShown.pass(p.key, done)) return;
        out.write(`\r\x1b[2K${clock()} ${terminalSafe(text)}`);
        statusLineOpen = true;
        return;
      }
      // Piped output: one line per quarter, so logs stay readable.
      const step = p.total ? Math.floor((p.bytes / p.total) * 4) : 0;
      if ((quarterSaid.get(p.key) ?? -1) >= step) return;
      quarterSaid.set(p.key, step);
      if (step > 0 && step < 4) line(text);
    },
    saved(e) {
      progressEnded(e.job.key);
      const checks = e.job.checks ?? [];
      if (opts.ndjson) {
        json({
          type: 'saved',
          ...jobRef(e.job),
          path: e.path,
          bytes: e.bytes,
          checks,
          verification: verification(checks, e.job),
          ...(checks.includes('short') ? { shorterThanAnnounced: true, announcedBytes: e.job.announcedBytes } : {}),
        });
      } else line(`saved     ${e.job.channelId} → ${e.path} (${formatBytes(e.bytes)}, ${verification(checks, e.job)})`);
    },
    failed(e) {
      // A final failure is always printed, and so is the first word that a recording is gone from the service (it is
      // looked at again only now and then, so its line would not come back soon); other attempts are what repeats.
      if (!e.willRetry) progressEnded(e.job.key);
      const firstGone = e.job.state === 'gone' && !goneSaid.has(e.job.key);
      if (firstGone) goneSaid.add(e.job.key);
      if (e.willRetry && !firstGone && !shows('failed')) return;
      if (opts.ndjson) {
        json({
          type: 'failed',
          ...jobRef(e.job),
          error: e.error.message,
          willRetry: e.willRetry,
          nextAttemptAt: e.nextAttemptAt,
          ...(e.job.state === 'gone' ? { gone: true } : {}),
        });
        return;
      }
      const next =
        e.willRetry && e.nextAttemptAt ? ` (retrying at ${clock(new Date(e.nextAttemptAt))})` : ' (not retried)';
      line(`failed    ${e.job.channelId}: ${e.error.message}${next}`);
    },
    expired(e) {
      progressEnded(e.job.key);
      if (opts.ndjson) json({ type: 'expired', ...jobRef(e.job), reason: e.reason });
      else line(`expired   ${e.job.channelId}: ${e.reason}`);
    },
    uploaded(e) {
      if (opts.ndjson) {
        json({
          type: 'uploaded',
          path: e.path,
          bytes: e.bytes,
          contentType: e.contentType,
          ...(e.channelId ? { channelId: e.channelId, track: e.track ?? null } : {}),
        });
      } else line(`uploaded  ${e.path} (${formatBytes(e.bytes)}, ${e.contentType})`);
    },
    tunnel(s) {
      if (opts.ndjson) {
        json({
          type: 'tunnel',
          provider: s.provider,
          state: s.state,
          publicUrl: s.publicUrl,
          message: s.message,
          uploads: s.uploads,
          uploadsMessage: s.uploadsMessage,
        });
        return;
      }
      if (s.uploads === 'blocked') line(`uploads   blocked: ${s.uploadsMessage ?? ''}`);
      if (s.state === 'connecting') return;
      line(
        `tunnel    ${s.provider}: ${s.state}${s.publicUrl ? ` ${s.publicUrl}` : ''}${s.message ? ` (${s.message})` : ''}`,
      );
    },
    registered(url, channelHookError = null) {
      if (opts.ndjson) {
        raw({ type: 'registered', url, channelHook: channelHookError === null ? 'set' : channelHookError });
        return;
      }
      line(`registered the webhook URL with the service: ${url}`, false);
      if (channelHookError !== null) {
        line(`the channel lifecycle hook could not be set (${channelHookError}); live channels are polled instead`);
      }
    },
    channel(call) {
      if (opts.ndjson) json({ type: 'channel', action: call.action, channelId: call.channelId });
      else line(`${call.action === 'create' ? 'live     ' : 'closed   '} ${call.channelId}`);
    },
    recordingMissing(m) {
      if (opts.ndjson) {
        json({
          type: 'recording-missing',
          channelId: m.channelId,
          closedAt: m.closedAt,
          waitedSeconds: Math.round(m.waitedMs / 1000),
        });
        return;
      }
      line(
        `missing   ${m.channelId}: recording expected but not received ${Math.round(m.waitedMs / 60_000)} min after the channel closed; look for it in the service console`,
      );
    },
    registrationFailed(url, message) {
      if (opts.ndjson) json({ type: 'registration-failed', url, message });
      else line(`could not register ${url}: ${message}`);
    },
    gaps(report) {
      if (opts.ndjson) {
        json({
          type: 'gaps',
          since: report.since?.toISOString() ?? null,
          missing: report.missing.map((m) => ({ channelId: m.channelId, endedAt: m.endedAt.toISOString() })),
          error: report.error,
        });
        return;
      }
      if (report.error) line(`missed-recordings check skipped: ${report.error}`);
      else if (report.missing.length) {
        line(
          `possibly missed: ${counted(report.missing.length, 'channel', 'channels')} ended while Tally was not running with no recording webhook: ${report.missing
            .slice(0, 10)
            .map((m) => m.channelId)
            .join(', ')}${report.missing.length > 10 ? ', …' : ''}`,
        );
      }
    },
    health(view, previous) {
      if (opts.ndjson) {
        json({
          type: 'health',
          state: view.state,
          summary: view.summary,
          problems: view.problems,
          // A studio member runs no receiver: it says so instead of an address it does not have.
          ...(view.member ? { member: true } : { receiver: view.receiver }),
          components: view.components.map((c) => ({ id: c.id, state: c.state, reason: c.reason, action: c.action })),
          // Which recordings the problems are (the first few; the rest counted), as `tally status --json` has them.
          ...(view.problemRecordings
            ? { problemRecordings: view.problemRecordings, moreProblems: view.moreProblems ?? 0 }
            : {}),
        });
        return;
      }
      if (previous && previous.state === view.state && previous.summary === view.summary) return;
      // The first line only when something is wrong: "ready" already says that all is well.
      if (!previous && view.state === 'ok') return;
      const worst = view.components.find((c) => c.state === view.state && view.state !== 'ok');
      const action = worst?.action ? ` → ${worst.action}` : '';
      line(`health    ${view.state}: ${view.summary}${action}`);
    },
    stopping() {
      if (!opts.ndjson)
        line(
          opts.sandbox
            ? 'stopping: the sandbox stops too; its unfinished downloads end with it (removed at the next sandbox run).'
            : 'stopping: journal flushed, unfinished downloads resume on the next start.',
        );
      else json({ type: 'stopping' });
    },
    close() {
      for (const kind of windows.keys()) flushHidden(kind);
      if (statusLineOpen) out.write('\n');
      statusLineOpen = false;
      // Printed only after the journal is closed: a script may treat it as "safe to restart".
      if (opts.ndjson) json({ type: 'stopped' });
      else line('stopped.');
    },
  };
}

/** Prints the receive service's event stream: every webhook, download, upload and health change of `tally listen`. */
export function printReceiveEvents(service: ReceiveService, printer: ListenPrinter): void {
  service.on('health', (view, previous) => printer.health(view, previous));
  service.on('received', (job, warnings) => printer.received(job, warnings));
  service.on('duplicate', (job) => printer.duplicate(job));
  service.on('rejected', (r) => printer.rejected(r));
  service.on('progress', (p) => printer.progress(p));
  service.on('saved', (e) => printer.saved(e));
  service.on('failed', (e) => printer.failed(e));
  service.on('expired', (e) => printer.expired(e));
  service.on('uploaded', (e) => printer.uploaded(e));
  service.on('tunnel', (s) => printer.tunnel(s));
  service.on('registered', (r) => printer.registered(r.url, r.channelHookError));
  service.on('channel', (call) => printer.channel(call));
  service.on('recording-missing', (m) => printer.recordingMissing(m));
  service.on('registration-failed', (r) => printer.registrationFailed(r.url, r.message));
  service.on('gaps', (g) => printer.gaps(g));
}
