/**
 * Typed errors shared by the core, the CLI and the app. Every message is written for a producer, not a
 * developer: it says what went wrong and what to do. None of them ever carries the project secret.
 */
import { nested, noteText, type Note } from './notes.js';

/**
 * Base class: `code` is stable and machine-readable; `message` is for people. A message given as a note is
 * its English text, and the note travels in `params` (its code as `note`) for the popover to translate.
 */
export abstract class TallyError extends Error {
  abstract readonly code: string;
  readonly #said: Note | undefined;
  constructor(message: string | Note, options?: { cause?: unknown }) {
    super(typeof message === 'string' ? message : noteText(message), options);
    this.name = new.target.name;
    this.#said = typeof message === 'string' ? undefined : message;
  }
  /**
   * The specifics the message carries (a channel, an endpoint, a status), so the popover can say the same
   * thing in another language with them in place (ErrorView.params). Never a secret; by default the
   * message's note, if it was given as one.
   */
  get params(): ErrorParams | undefined {
    return this.#said ? { ...this.#said.params, note: this.#said.code } : undefined;
  }
  /** The message as a note, when it was given as one (a caller nests it in its own sentence). */
  get note(): Note | undefined {
    return this.#said;
  }
  /** A plain object safe to log or send over IPC (no cause chain, no request options). */
  toJSON(): { code: string; name: string; message: string; params?: ErrorParams } {
    const params = this.params;
    return { code: this.code, name: this.name, message: this.message, ...(params ? { params } : {}) };
  }
}

/** Structured specifics of an error message (see TallyError.params). */
export type ErrorParams = Record<string, string | number>;

/** The service refused the service ID / secret pair (any 401/403, or a body that says so). */
export class BadCredentialsError extends TallyError {
  readonly code = 'bad_credentials';
  constructor(
    message = 'The service rejected the service ID and secret. Check them in the console (Project Information), then enter them again (Settings → Service account, or tally login).',
  ) {
    super(message);
  }
}

/** The service does not know the channel. */
export class UnknownChannelError extends TallyError {
  readonly code = 'unknown_channel';
  constructor(readonly channelId: string) {
    super(`The service has no live channel with ID "${channelId}".`);
  }
  override get params(): ErrorParams {
    return { channel: this.channelId };
  }
}

/** Force termination answered `send: false`: the channel was not ended. */
export class ChannelNotEndedError extends TallyError {
  readonly code = 'not_ended';
  constructor(readonly channelId: string) {
    super(`The service did not end channel "${channelId}" (it answered send: false). It may still be live; try again.`);
  }
  override get params(): ErrorParams {
    return { channel: this.channelId };
  }
}

/** The service answered with an unexpected status. `bodySnippet` is the first bytes, HTML summarised. */
export class ServiceError extends TallyError {
  readonly code = 'service_error';
  constructor(
    readonly status: number,
    readonly bodySnippet: string,
    readonly endpoint: string,
  ) {
    super(`The service answered ${status} for ${endpoint}${bodySnippet ? `: ${bodySnippet}` : ' with an empty body'}.`);
  }
  override get params(): ErrorParams {
    return { status: this.status, endpoint: this.endpoint };
  }
}

/** No answer in time. */
export class TimeoutError extends TallyError {
  readonly code = 'timeout';
  constructor(
    readonly endpoint: string,
    readonly timeoutMs: number,
  ) {
    super(`The service did not answer ${endpoint} within ${Math.round(timeoutMs / 100) / 10} s.`);
  }
  override get params(): ErrorParams {
    return { endpoint: this.endpoint, seconds: Math.round(this.timeoutMs / 100) / 10 };
  }
}

/** The host could not be reached at all (DNS, refused, reset before any answer). */
export class NetworkError extends TallyError {
  readonly code = 'network';
  readonly reason: string;
  readonly #reasonNote: Note | null;
  constructor(
    readonly endpoint: string,
    reason: string | Note,
    options?: { cause?: unknown },
  ) {
    const text = typeof reason === 'string' ? reason : noteText(reason);
    super(
      `Could not reach the service for ${endpoint}: ${text}. Check the network connection and the host settings.`,
      options,
    );
    this.reason = text;
    this.#reasonNote = typeof reason === 'string' ? null : reason;
  }
  /** With the reason as a nested note when it is one of the common ones (refused, unknown host...). */
  override get params(): ErrorParams {
    return { endpoint: this.endpoint, ...(this.#reasonNote ? nested('reason', this.#reasonNote) : {}) };
  }
}

/** A response (or file) did not have the documented shape. `paths` names every bad field. */
export class ResponseShapeError extends TallyError {
  readonly code = 'response_shape';
  constructor(
    readonly endpoint: string,
    readonly paths: readonly string[],
    detail: string,
  ) {
    super(`The service answered ${endpoint} in an unexpected shape: ${detail}`);
  }
}

/** Input from a caller (CLI flag, IPC argument, settings file, webhook) failed validation. */
export class ValidationError extends TallyError {
  readonly code = 'invalid_input';
  constructor(
    readonly paths: readonly string[],
    detail: string | Note,
  ) {
    super(detail);
  }
}

/** Something the user must configure first (credentials, folder, keychain). */
export class ConfigError extends TallyError {
  readonly code = 'config';
}
