/**
 * The event trail of a receiver: what its pipeline, its health and its studio publisher did, one line per event
 * in the log a producer can send (Signal-Desktop and VS Code keep such a trail). The receive service writes it
 * for every face (the tray app, `tally serve`, `tally listen`), so the log holds the same events whichever face
 * ran: every webhook received or refused, every download attempt and its outcome (saved, failed and when it is
 * tried again, expired and why), the tunnel, registration, channel hook and gap report, and every change of
 * health. Progress is debug detail. A channel ID is the sender's text: it is quoted and shortened, never trusted.
 */
import type { HealthView } from '../health-view.js';
import { describeError, type Logger } from '../logger.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import type { PipelineEvents } from '../pipeline/pipeline-types.js';
import type { JobState } from '../recordings/types.js';
import type { StudioPublisher } from '../studio/publisher.js';
import { KeyedThrottle } from '../throttle.js';
import type { Clock } from '../time.js';
import { counted } from '../counted.js';

/** Hostile text (a channel ID, a reason quoting a request) as one safe, bounded piece of a log line. */
export function quoted(text: string, max = 120): string {
  const short = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(short);
}

const MB = 1024 * 1024;
const size = (bytes: number | null | undefined): string =>
  typeof bytes === 'number' ? `${(bytes / MB).toFixed(bytes < 10 * MB ? 2 : 1)} MB` : 'unknown size';

/** How often one download's progress is written at the debug level. */
const PROGRESS_EVERY_MS = 5_000;

/**
 * Writes the pipeline's events to `log` (scopes: webhook, downloads, tunnel, studio-hooks); returns the function
 * that stops. Job states are followed from the journal's changes, so an attempt's start is seen once per attempt.
 */
export function tracePipeline(pipeline: RecordingPipeline, log: Logger, clock?: Pick<Clock, 'now'>): () => void {
  const webhook = log.child('webhook');
  const downloads = log.child('downloads');
  const tunnel = log.child('tunnel');
  const hooks = log.child('channel-hook');
  const offs: (() => void)[] = [];
  const on = <K extends keyof PipelineEvents>(event: K, listener: (...args: PipelineEvents[K]) => void) => {
    pipeline.on(event, listener as never);
    offs.push(() => pipeline.off(event, listener as never));
  };
  const states = new Map<string, { state: JobState; attempts: number }>();
  const progress = new KeyedThrottle(PROGRESS_EVERY_MS, clock);

  on('listen', (state) => {
    if (state.listening) log.info(`receiver listening on port ${state.port}`);
    else log.warn(`receiver cannot listen on port ${state.port}: ${describeError(state.error)}`);
  });
  on('received', (job, warnings) => {
    states.set(job.key, { state: job.state, attempts: job.attempts });
    const twin = job.twin ? ` (the same recording as ${quoted(job.twin, 40)})` : '';
    webhook.info(
      `received ${job.shape} webhook for channel ${quoted(job.channelId)}: recording ${job.key}${twin}, ${size(job.announcedBytes)}, deleted by the service at ${job.deadline}`,
    );
    for (const warning of warnings) webhook.warn(`${quoted(job.channelId)}: ${warning}`);
  });
  on('duplicate', (job) =>
    webhook.info(`webhook for channel ${quoted(job.channelId)} again: recording ${job.key} is already ${job.state}`),
  );
  on('rejected', (r) => {
    const channel = r.channelId === undefined ? '' : ` for channel ${quoted(r.channelId)}`;
    webhook.warn(`refused a request${channel} from ${r.remoteAddress} with ${r.status}: ${quoted(r.reason, 300)}`);
  });
  on('upload-refused', (r) =>
    webhook.warn(
      `refused a client recording${r.channelId === null ? '' : ` of channel ${quoted(r.channelId)}`} (${r.status}): ${quoted(r.reason, 300)}`,
    ),
  );
  on('uploaded', (e) =>
    webhook.info(`client recording saved: ${quoted(e.fileName)} (${size(e.bytes)}) from ${quoted(e.origin ?? '?')}`),
  );
  on('changed', (job) => {
    const before = states.get(job.key);
    states.set(job.key, { state: job.state, attempts: job.attempts });
    if (job.state === 'downloading' && (before?.state !== 'downloading' || before.attempts !== job.attempts)) {
      downloads.info(`attempt ${job.attempts} for channel ${quoted(job.channelId)} (recording ${job.key}) started`);
    } else if (before && before.state !== job.state && job.state === 'pending' && before.state !== 'downloading') {
      downloads.info(
        `recording ${job.key} of channel ${quoted(job.channelId)} is waiting again (${before.state} → pending)`,
      );
    }
    if (job.state !== 'downloading') progress.forget(job.key);
  });
  on('progress', (p) => {
    if (!progress.pass(p.key)) return;
    downloads.debug(`recording ${p.key}: ${size(p.bytes)} of ${size(p.total)}`);
  });
  on('saved', (e) =>
    downloads.info(
      `saved channel ${quoted(e.job.channelId)} (recording ${e.job.key}) after ${counted(e.job.attempts, 'attempt', 'attempts')}: ${size(e.bytes)} verified, ${quoted(e.path, 300)}`,
    ),
  );
  on('failed', (e) => {
    const what = `attempt ${e.job.attempts} for channel ${quoted(e.job.channelId)} (recording ${e.job.key}) failed: ${quoted(e.job.error ?? describeError(e.error), 300)}`;
    if (e.willRetry) downloads.warn(`${what}; next attempt at ${e.nextAttemptAt ?? 'a later time'}`);
    else downloads.error(`${what}; no more attempts`);
  });
  on('expired', (e) =>
    downloads.error(`recording ${e.job.key} of channel ${quoted(e.job.channelId)} expired: ${quoted(e.reason, 300)}`),
  );
  on('disk', (d) =>
    (d.state === 'ok' ? downloads.info : downloads.warn)(
      `disk ${d.state}: ${size(d.freeBytes)} free, ${size(d.reservedBytes)} reserved${d.waiting > 0 ? `, ${counted(d.waiting, 'recording', 'recordings')} waiting for space` : ''}`,
    ),
  );
  on('state-restored', (info) => log.warn(`state folder ${info.dir} was made again from memory (${info.jobs} jobs)`));
  on('tunnel', (s) => {
    const line = `${s.provider}: ${s.state}${s.publicUrl ? ` at ${s.publicUrl}` : ''}${s.message ? `: ${s.message}` : ''}`;
    if (s.state === 'error' || s.state === 'unreachable') tunnel.warn(line);
    else tunnel.info(line);
  });
  on('registered', (r) => {
    tunnel.info(`registered ${r.url} with the service`);
    if (r.channelHookError) tunnel.warn(`the channel hook could not be registered: ${r.channelHookError}`);
  });
  on('registration-failed', (r) => tunnel.warn(`registering ${r.url} failed: ${r.message}`));
  on('channel', (call) => hooks.info(`channel ${quoted(call.channelId)}: ${call.action}`));
  on('recording-missing', (m) =>
    hooks.warn(`channel ${quoted(m.channelId)} closed, but its recording webhook never came`),
  );
  on('gaps', (g) => {
    if (g.error) log.warn(`gap report could not run: ${g.error}`);
    else
      log.info(
        `gap report: ${counted(g.missing.length, 'recording', 'recordings')} missed while Tally was not running`,
      );
  });
  return () => {
    for (const off of offs) off();
  };
}

/**
 * The lines a change of health writes: the overall state when it changed, then each component whose state or
 * reason changed. Nothing when only an ok reason moved (free space changes all the time).
 */
export function healthLines(view: HealthView, previous: HealthView | null): string[] {
  return healthChanges(view, previous).map((change) => change.line);
}

/** The health's changes, each with whether it is good news (logged at info) or not (logged at warn). */
export function healthChanges(view: HealthView, previous: HealthView | null): { line: string; ok: boolean }[] {
  const changes: { line: string; ok: boolean }[] = [];
  if (view.state !== previous?.state) {
    changes.push({
      line: `${previous?.state ?? 'starting'} → ${view.state}: ${view.summary}`,
      ok: view.state === 'ok',
    });
  }
  for (const c of view.components) {
    const before = previous?.components.find((p) => p.id === c.id);
    if (before?.state === c.state && (c.state === 'ok' || before.reason === c.reason)) continue;
    changes.push({ line: `${c.id} ${before?.state ?? 'starting'} → ${c.state}: ${c.reason}`, ok: c.state === 'ok' });
  }
  return changes;
}

/** Writes the health's changes to `log`: a part that turned ok at info, anything else at warn. */
export function logHealth(log: Logger, view: HealthView, previous: HealthView | null): void {
  for (const { line, ok } of healthChanges(view, previous)) (ok ? log.info : log.warn)(line);
}

/** Writes a studio publisher's events (connection, published, failed, warnings) to `log`; returns the stop. */
export function tracePublisher(publisher: StudioPublisher, log: Logger): () => void {
  const listeners: [string, (...args: never[]) => void][] = [
    ['connected', (info: { url: string }) => log.info(`connected to the team server ${info.url}`)],
    [
      'waiting',
      (info: { message: string; attempt: number; delayMs: number }) =>
        log.warn(
          `team server unreachable (attempt ${info.attempt}): ${info.message}; trying again in ${info.delayMs} ms`,
        ),
    ],
    ['connection', (state: string) => (state === 'reconnected' ? log.info : log.warn)(`team server link ${state}`)],
    [
      'published',
      (e: { channelId: string; identity: string; bytes: number }) =>
        log.info(`published channel ${quoted(e.channelId)} (${e.identity}, ${size(e.bytes)}) to the team`),
    ],
    [
      'alreadyShared',
      (e: { channelId: string; identity: string }) =>
        log.info(`channel ${quoted(e.channelId)} (${e.identity}) was already shared with the team`),
    ],
    [
      'failed',
      (e: { channelId: string; message: string }) =>
        log.warn(`sharing channel ${quoted(e.channelId)} failed: ${quoted(e.message, 300)}`),
    ],
    [
      'refused',
      (e: { error: Error; retryInMs: number }) =>
        log.error(`the team server refused: ${e.error.message}; trying again in ${e.retryInMs} ms`),
    ],
    ['warning', (w: { kind: string; message: string }) => log.warn(`${w.kind}: ${w.message}`)],
    ['warningCleared', (kind: string) => log.info(`${kind}: cleared`)],
  ];
  for (const [event, listener] of listeners) publisher.on(event as never, listener as never);
  return () => {
    for (const [event, listener] of listeners) publisher.off(event as never, listener as never);
  };
}

/** What traceFollower reads of a studio member's follower (its events, as StudioFollower emits them). */
interface FollowerLike {
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

/**
 * Writes a studio member's mirror events to `log` (`tally follow`, the app following a studio): connection,
 * each recording started, saved or failed, warnings. Returns the stop.
 */
export function traceFollower(follower: FollowerLike, log: Logger, clock?: Pick<Clock, 'now'>): () => void {
  const progress = new KeyedThrottle(PROGRESS_EVERY_MS, clock);
  const listeners: [string, (...args: never[]) => void][] = [
    [
      'ready',
      (info: { name: string; url: string; folder: string }) =>
        log.info(`following the team server ${info.url} as ${quoted(info.name)} into ${info.folder}`),
    ],
    [
      'waiting',
      (info: { message: string; attempt: number; delayMs: number }) =>
        log.warn(
          `team server unreachable (attempt ${info.attempt}): ${info.message}; trying again in ${info.delayMs} ms`,
        ),
    ],
    ['connection', (state: string) => (state === 'reconnected' ? log.info : log.warn)(`team server link ${state}`)],
    [
      'started',
      (a: { channelId: string; identity: string; bytes: number }) =>
        log.info(`mirroring channel ${quoted(a.channelId)} (${a.identity}, ${size(a.bytes)})`),
    ],
    [
      'progress',
      (p: { identity: string; bytes: number; totalBytes: number }) => {
        if (!progress.pass(p.identity)) return;
        log.debug(`${p.identity}: ${size(p.bytes)} of ${size(p.totalBytes)}`);
      },
    ],
    [
      'saved',
      (e: { channelId: string; identity: string; bytes: number; path: string }) => {
        progress.forget(e.identity);
        log.info(
          `saved channel ${quoted(e.channelId)} (${e.identity}, ${size(e.bytes)} verified): ${quoted(e.path, 300)}`,
        );
      },
    ],
    [
      'failed',
      (e: { channelId: string; identity: string; message: string; willRetry: boolean }) => {
        // Gone for good: its key goes too (it was kept for ever before).
        if (!e.willRetry) progress.forget(e.identity);
        (e.willRetry ? log.warn : log.error)(
          `mirroring channel ${quoted(e.channelId)} (${e.identity}) failed: ${quoted(e.message, 300)}${e.willRetry ? '; trying again' : '; gone from the team store'}`,
        );
      },
    ],
    ['warning', (w: { kind: string; message: string }) => log.warn(`${w.kind}: ${w.message}`)],
    ['warningCleared', (kind: string) => log.info(`${kind}: cleared`)],
  ];
  for (const [event, listener] of listeners) follower.on(event, listener);
  return () => {
    for (const [event, listener] of listeners) follower.off(event, listener);
  };
}
