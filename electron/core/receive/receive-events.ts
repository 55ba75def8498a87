/**
 * The receive service's one typed event stream, as a face prints or shows it (`tally listen`'s printer): what
 * happened to each webhook, download and upload of the running pipeline, and what the studio publisher beside it
 * did. The service forwards these from whichever pipeline and publisher it runs, so a face subscribes once, to
 * the service, and never to a pipeline (a face imports no domain folder: eslint/boundaries.js, `domain`).
 *
 * Each payload type is declared here, as the part of the domain's event a face may read: a face depends on this
 * vocabulary, not on the journal's, the download queue's or the publisher's.
 */
import type { ProgressEvent } from '../pipeline/download-manager-types.js';
import type { MissingRecording } from '../pipeline/expected-recordings.js';
import type { PipelineReady, PipelineRejection, PipelineUploadedEvent } from '../pipeline/pipeline-types.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import type { GapReportResult } from '../recordings/gap-report.js';
import type { RecordingJob } from '../recordings/types.js';
import type { PublishedEvent, StudioPublisher } from '../studio/publisher.js';
import type { TunnelStatus } from '../tunnels/types.js';
import type { ChannelHookCall } from '../webhook/channel-hook.js';

/** A journalled recording as a face prints it. */
export type ReceivedRecording = Pick<
  RecordingJob,
  'key' | 'channelId' | 'url' | 'announcedBytes' | 'shape' | 'deadline' | 'twin' | 'follows' | 'checks' | 'state'
>;

/** A request the receiver refused (a refused upload also names its recording). */
export type RefusedRequest = Pick<PipelineRejection, 'status' | 'reason' | 'remoteAddress' | 'channelId' | 'upload'>;

/** A running download. */
export type DownloadProgressed = Pick<
  ProgressEvent,
  'key' | 'channelId' | 'bytes' | 'total' | 'rate' | 'etaSeconds' | 'deadline'
>;

/** A recording saved into the folder: where, how big, and what it was checked against (`job.checks`). */
export interface RecordingSaved {
  job: ReceivedRecording;
  path: string;
  bytes: number;
}

/** A failed download attempt, and whether and when it is tried again. */
export interface DownloadFailed {
  job: ReceivedRecording;
  error: { message: string };
  willRetry: boolean;
  /** ISO time of the next attempt, or null. */
  nextAttemptAt: string | null;
}

/** A recording given up: the service deleted it, or its deadline passed. */
export interface RecordingExpired {
  job: ReceivedRecording;
  reason: string;
}

/** A saved web client upload. */
export type UploadSaved = Pick<
  PipelineUploadedEvent,
  'path' | 'bytes' | 'contentType' | 'fileName' | 'channelId' | 'track'
>;

/** The public path as the tunnel reports it. */
export type TunnelChanged = Pick<
  TunnelStatus,
  'provider' | 'state' | 'publicUrl' | 'message' | 'uploads' | 'uploadsMessage'
>;

/** The channel lifecycle hook: a channel opened (`create`) or closed. */
export type ChannelChanged = Pick<ChannelHookCall, 'action' | 'channelId'>;

/** A closed channel whose recording webhook did not come in time. */
export type RecordingOverdue = Pick<MissingRecording, 'channelId' | 'closedAt' | 'waitedMs'>;

/** Channels that ended while Tally was not running, with no recording webhook (or why that was not checked). */
export type MissedWhileAway = Pick<GapReportResult, 'since' | 'missing' | 'error'>;

/** A recording the studio publisher shared with the team. */
export type RecordingShared = Pick<PublishedEvent, 'identity' | 'channelId' | 'kind' | 'bytes'>;

/** Where the running pipeline receives: what a face prints once it is ready (`ReceiveService.ready`). */
export interface ReceiveReady extends Pick<PipelineReady, 'localUrl' | 'publicUrl' | 'uploadUrl'> {
  /** The web page origins allowed to upload now (settings and flags). */
  uploadOrigins: string[];
}

/** What the service tells its face, by name (node:events typing). */
export interface ReceiveEvents {
  received: [recording: ReceivedRecording, warnings: string[]];
  duplicate: [recording: ReceivedRecording];
  rejected: [rejection: RefusedRequest];
  progress: [progress: DownloadProgressed];
  saved: [saved: RecordingSaved];
  failed: [failure: DownloadFailed];
  expired: [expired: RecordingExpired];
  uploaded: [upload: UploadSaved];
  tunnel: [status: TunnelChanged];
  registered: [info: { url: string; channelHookError: string | null }];
  'registration-failed': [info: { url: string; message: string }];
  channel: [call: ChannelChanged];
  'recording-missing': [missing: RecordingOverdue];
  gaps: [report: MissedWhileAway];
  /** The studio publisher (a studio's receiver) connected to the team server. */
  'studio-connected': [info: { url: string }];
  /** The team server cannot be reached yet: why, and when the next try is. */
  'studio-waiting': [info: { message: string; delayMs: number }];
  /** The link after the first connection: lost (the client reconnects by itself), or back. */
  'studio-connection': [state: 'disconnected' | 'reconnected'];
  /** The team server refused the credentials or the TLS: only the user can fix it; tried again now and then. */
  'studio-refused': [info: { message: string; retryInMs: number }];
  'studio-published': [shared: RecordingShared];
  /** Something only the user or the team server's admin can fix (its line already went to the log). */
  'studio-warning': [warning: { kind: string; message: string }];
}

/** How the service emits one of its events (its own `emit`). */
export type ReceiveEmit = <K extends keyof ReceiveEvents>(event: K, ...args: ReceiveEvents[K]) => void;

/**
 * Forwards what a pipeline says to the face as the service's events; answers the function that stops it. Added
 * before the service's own listeners, so a face prints a webhook before the health it changes.
 */
export function forwardPipeline(pipeline: RecordingPipeline, emit: ReceiveEmit): () => void {
  const offs: (() => void)[] = [];
  const on: RecordingPipeline['on'] = (event, listener) => {
    pipeline.on(event, listener);
    offs.push(() => pipeline.off(event, listener));
    return pipeline;
  };
  on('received', (job, warnings) => emit('received', job, warnings));
  on('duplicate', (job) => emit('duplicate', job));
  on('rejected', (rejection) => emit('rejected', rejection));
  on('progress', (progress) => emit('progress', progress));
  on('saved', (saved) => emit('saved', saved));
  on('failed', (failure) => emit('failed', failure));
  on('expired', (expired) => emit('expired', expired));
  on('uploaded', (upload) => emit('uploaded', upload));
  on('tunnel', (status) => emit('tunnel', status));
  on('registered', (info) => emit('registered', info));
  on('registration-failed', (info) => emit('registration-failed', info));
  on('channel', (call) => emit('channel', call));
  on('recording-missing', (missing) => emit('recording-missing', missing));
  on('gaps', (report) => emit('gaps', report));
  return () => {
    for (const off of offs) off();
  };
}

/** Forwards what the studio publisher says to the face (added before it starts, so its first events arrive). */
export function forwardPublisher(publisher: StudioPublisher, emit: ReceiveEmit): void {
  publisher.on('connected', (info) => emit('studio-connected', { url: info.url }));
  publisher.on('waiting', (info) => emit('studio-waiting', { message: info.message, delayMs: info.delayMs }));
  publisher.on('connection', (state) => emit('studio-connection', state));
  publisher.on('refused', ({ error, retryInMs }) => emit('studio-refused', { message: error.message, retryInMs }));
  publisher.on('published', (shared) => emit('studio-published', shared));
  publisher.on('warning', (w) => emit('studio-warning', { kind: w.kind, message: w.message }));
}
