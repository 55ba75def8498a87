/**
 * How the app core says what went wrong: its fixed notes, errors as the views show them (`ErrorView`), the
 * gap report's view, error text safe for one log line, the error that says why no pipeline is running, and the
 * settings fields named when the receiver cannot listen.
 */
import type { Phase } from './app-options.js';
import { nested, note, type ErrorView, type GapReport } from '../../contract.js';
import { ConfigError, TallyError } from '../errors.js';
import { redactSecrets } from '../redact.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import type { GapReportResult } from '../recordings/gap-report.js';

export const NO_CREDENTIALS = note('noCredentials');

export const NOT_STARTED = note('receiverStarting');

export const STOPPED = note('shuttingDown');

export const NO_PUBLIC_URL = note('noPublicUrl');

export function errorView(error: unknown): ErrorView {
  if (error instanceof TallyError) return { code: error.code, message: error.message };
  return { code: 'internal', message: 'Something went wrong inside Tally. Try again.' };
}

/**
 * What went wrong, in one line that names the cause: a Tally error's own message, else the error's message
 * (its name when it has none) with anything that looks like a secret blanked, since a library's message can
 * quote a URL or header. Shown in the health ("not running: …") and logged.
 */
export function describe(error: unknown): string {
  if (error instanceof TallyError) return error.message;
  const text = error instanceof Error ? error.message.trim() || error.name : typeof error === 'string' ? error : '';
  return text ? clean(redactSecrets(text), 200) : 'unknown error';
}

/** Control characters in hostile text (channel IDs) must not forge log lines. */
export function clean(text: string, max = 120): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function gapView(report: GapReportResult | null): GapReport {
  if (!report) return { since: null, checkedAt: null, missing: [], error: null };
  return {
    since: report.since ? report.since.toISOString() : null,
    checkedAt: report.checkedAt.toISOString(),
    missing: report.missing.map((m) => ({ channelId: m.channelId, endedAt: m.endedAt.toISOString() })),
    error: report.error,
    errorNotes: report.errorNotes ?? null,
  };
}

/** The running pipeline, or the error that says why there is none (still starting, stopping, or failed). */
export function requirePipeline(
  host: { readonly pipeline: RecordingPipeline | null; readonly error: string | null },
  phase: Phase,
): RecordingPipeline {
  if (host.pipeline) return host.pipeline;
  if (phase !== 'running') throw new ConfigError(phase === 'new' ? NOT_STARTED : STOPPED);
  throw new ConfigError(host.error ?? 'The webhook receiver is not running.');
}

/**
 * The settings file's fields behind a receiver that cannot listen: the message names them, since the app
 * has no form for them (a hand-edited settings.json is the usual cause).
 */
export function withSettingsField(error: unknown): unknown {
  if (!(error instanceof ConfigError) || error.note?.code !== 'receiverCannotListen') return error;
  // The receiver's own sentence stays a note inside this one, so the popover says both in its language.
  return new ConfigError(note('receiverFieldsFix', nested('listen', error.note)), { cause: error });
}
