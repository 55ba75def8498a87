/**
 * Keeps a tunnel open and proves it works end to end: the receiver is asked for its self-check THROUGH the
 * public URL, and must answer with this process's instance nonce (any other answer means the URL reaches
 * somebody else's server). Broken tunnels are reopened with exponential backoff and jitter.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { z } from 'zod';
import { errorNote, nested, note, notesText, type Note } from '../notes.js';
import { ConfigError, ValidationError } from '../errors.js';
import { describeError, silentLogger, type Logger } from '../logger.js';
import { tunnelRequest, withCause } from './http.js';
import { checkBrowserUpload } from './browser-check.js';
import type { ConnectToOverride } from './http.js';
import type { BackoffPolicy } from '../backoff.js';
import { RetryLoop } from '../retry-loop.js';
import { systemClock } from '../time.js';
import type { LocalTarget, TunnelProvider, TunnelState, TunnelStatus } from './types.js';
import { tunnelOff } from '../view-shapes.js';

/** How a broken tunnel is reopened: equal jitter, from 1 s up to 5 min (core/backoff.ts computes each wait). */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 300_000, jitter: 0.5 };

export type SelfCheckResult =
  | { ok: true }
  | { ok: false; reason: 'foreign' | 'status' | 'shape' | 'network' | 'timeout'; message: string; notes: Note[] };

const SelfCheckSchema = z.object({ ok: z.literal(true), id: z.string().max(256), sig: z.string().max(256).optional() });

export interface SelfCheckOptions {
  /** Full self-check URL through the tunnel. */
  url: string;
  /** The receiver's instance nonce. */
  expectedId: string;
  /**
   * Signs a fresh nonce as the receiver does (`WebhookReceiver.signProbe`): with it the check sends a nonce and
   * accepts only an answer signed for it, so a cached or replayed answer never passes.
   */
  signProbe?: (nonce: string) => string;
  timeoutMs?: number;
  signal?: AbortSignal;
  connectTo?: ConnectToOverride;
}

/**
 * Asks the receiver for `{ ok: true, id }` through the public URL. Never throws; the message names the
 * public origin only (the path carries the webhook token).
 */
export async function checkSelf(options: SelfCheckOptions): Promise<SelfCheckResult> {
  const where = safeOrigin(options.url);
  const nonce = options.signProbe ? randomBytes(24).toString('base64url') : null;
  const url = nonce ? withProbe(options.url, nonce) : options.url;
  let response;
  try {
    response = await tunnelRequest(url, {
      headers: {
        accept: 'application/json',
        // Interstitial pages of the public tunnel services are skipped for requests that say so.
        'bypass-tunnel-reminder': 'tally',
        'ngrok-skip-browser-warning': 'tally',
      },
      timeoutMs: options.timeoutMs ?? 10_000,
      signal: options.signal,
      maxBodyBytes: 4096,
      connectTo: options.connectTo,
    });
  } catch (error) {
    const reason = (error as { reason?: string }).reason === 'timeout' ? 'timeout' : 'network';
    return failed(reason, note('selfUnreachable', { where, ...withCause(error) }));
  }
  if (response.status !== 200) return failed('status', note('selfStatus', { where, status: response.status }));
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    body = undefined;
  }
  const parsed = SelfCheckSchema.safeParse(body);
  if (!parsed.success) return failed('shape', note('selfShape', { where }));
  if (parsed.data.id !== options.expectedId) return failed('foreign', note('selfForeign', { where }));
  if (nonce && options.signProbe && !sameText(parsed.data.sig ?? '', options.signProbe(nonce))) {
    return failed('foreign', note('selfForeign', { where }));
  }
  return { ok: true };
}

function withProbe(url: string, nonce: string): string {
  const u = new URL(url);
  u.searchParams.set('probe', nonce);
  return u.href;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function failed(reason: Exclude<SelfCheckResult, { ok: true }>['reason'], said: Note): SelfCheckResult {
  return { ok: false, reason, message: notesText([said]), notes: [said] };
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the public URL';
  }
}

export interface UrlChange {
  /** Previous public webhook URL (null before the first one). */
  previous: string | null;
  /** New public webhook URL (null when the provider is local only). */
  current: string | null;
  publicBaseUrl: string | null;
}

export interface ReconnectScheduled {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface TunnelSupervisorEvents {
  status: [status: TunnelStatus];
  'url-changed': [change: UrlChange];
  'reconnect-scheduled': [info: ReconnectScheduled];
}

export interface TunnelSupervisorOptions {
  provider: TunnelProvider;
  /** Where the receiver listens. */
  local: LocalTarget;
  /** The receiver's own webhook URL (loopback), shown in the status. */
  localUrl: string | null;
  /** Public webhook URL for a public base, e.g. `${base}/hooks/${token}`. */
  webhookUrl: (publicBaseUrl: string) => string;
  /** Public self-check URL for a public base, e.g. `${base}/healthz/${token}`. */
  selfCheckUrl: (publicBaseUrl: string) => string;
  /** Public upload URL (web SDK `recordUrl`), when the receiver takes uploads. */
  uploadUrl?: (publicBaseUrl: string) => string;
  /** Page origins allowed to upload; the browser check sends the first as its Origin. */
  uploadOrigins?: () => readonly string[];
  /** The receiver's instance nonce, which the self-check must echo. */
  expectedId: string;
  /** Signs the check's nonce as the receiver does (see SelfCheckOptions.signProbe). */
  signProbe?: (nonce: string) => string;
  /** Time between checks while reachable. Default 60 s. */
  checkIntervalMs?: number;
  /** Time between checks after a failed one. Default 10 s. */
  retryCheckIntervalMs?: number;
  checkTimeoutMs?: number;
  /** Failed checks in a row before the tunnel is reopened. Default 3. */
  maxFailedChecks?: number;
  backoff?: Partial<BackoffPolicy>;
  now?: () => Date;
  random?: () => number;
  connectTo?: ConnectToOverride;
  /** Where failures that change nothing for the user still get written (closing a dead tunnel). */
  log?: Logger;
}

type Phase = 'stopped' | 'opening' | 'open' | 'waiting';

/**
 * Owns one provider: opens it, checks it, reopens it. Emits `status` on every change, `url-changed` when
 * the public webhook URL changes (including the first one), and `reconnect-scheduled` before each wait.
 * All timers are unref'd; `stop()` releases everything.
 */
export class TunnelSupervisor extends EventEmitter<TunnelSupervisorEvents> {
  readonly #options: TunnelSupervisorOptions;
  readonly #provider: TunnelProvider;
  /** Reopens after a failure: its count is the attempt number `reconnect-scheduled` reports. */
  readonly #reopen: RetryLoop;
  readonly #now: () => Date;
  #phase: Phase = 'stopped';
  /** Bumped on every (re)open and on stop; async work from an older generation is dropped. */
  #generation = 0;
  #failedChecks = 0;
  #timer: NodeJS.Timeout | null = null;
  #abort: AbortController | null = null;
  #publicBaseUrl: string | null = null;
  /** Last public webhook URL announced by `url-changed`; survives stop/start so a restart compares right. */
  #announcedUrl: string | null = null;
  #warning: Note | null = null;
  #registeredUrl: string | null = null;
  #status: TunnelStatus;
  #checking = false;

  constructor(options: TunnelSupervisorOptions) {
    super();
    this.#options = options;
    this.#provider = options.provider;
    this.#reopen = new RetryLoop({
      policy: { ...DEFAULT_BACKOFF, ...options.backoff },
      random: options.random ?? Math.random,
      clock: systemClock,
    });
    this.#now = options.now ?? (() => new Date());
    this.#status = {
      ...tunnelOff(this.#provider.kind, options.localUrl),
      ...uploadsSaid(options.uploadUrl ? null : [note('uploadsOff')]),
    };
  }

  /** The latest status (a copy). */
  get status(): TunnelStatus {
    return { ...this.#status };
  }

  /** The current public base URL (no webhook path), or null. */
  get publicBaseUrl(): string | null {
    return this.#publicBaseUrl;
  }

  /** Opens the provider and starts checking. Calling it again while running does nothing. */
  start(): void {
    if (this.#phase !== 'stopped') return;
    this.#provider.on('closed', this.#onClosed);
    this.#provider.on('error', this.#onError);
    this.#reopen.reset();
    void this.#open();
  }

  /** Stops checking and closes the provider. The status becomes `off`. */
  async stop(): Promise<void> {
    if (this.#phase === 'stopped') return;
    this.#phase = 'stopped';
    this.#generation++;
    this.#clearTimer();
    this.#abort?.abort();
    this.#abort = null;
    this.#provider.off('closed', this.#onClosed);
    this.#provider.off('error', this.#onError);
    await this.#provider.close().catch((error: unknown) => this.#warnClose(error));
    this.#publicBaseUrl = null;
    this.#update({ state: 'off', publicUrl: null, uploadUrl: null, ...messageSaid([note('tunnelStopped')]) });
  }

  /** Runs a self-check now (e.g. the user pressed "Check"), unless no tunnel is open. */
  checkNow(): void {
    if (this.#phase !== 'open' || this.#publicBaseUrl === null || this.#checking) return;
    this.#clearTimer();
    void this.#check(this.#generation);
  }

  /** Records which public webhook URL is registered with the service, so the status can say so. */
  setRegisteredUrl(url: string | null): void {
    if (url === this.#registeredUrl) return;
    this.#registeredUrl = url;
    const registered = this.#status.publicUrl !== null && this.#status.publicUrl === url;
    if (registered !== this.#status.registered) this.#update({});
  }

  readonly #onClosed = (reason: string | Note): void => {
    if (this.#phase !== 'open') return;
    this.#reconnect([note('tunnelClosed', typeof reason === 'string' ? { reason } : nested('reason', reason))]);
  };

  readonly #onError = (error: Error): void => {
    if (this.#phase !== 'open') return;
    this.#reconnect([note('tunnelFailed', withCause(error))]);
  };

  async #open(): Promise<void> {
    const generation = ++this.#generation;
    this.#phase = 'opening';
    this.#failedChecks = 0;
    const abort = new AbortController();
    this.#abort = abort;
    this.#update({ state: 'connecting', ...messageSaid([note('tunnelOpening', { provider: this.#provider.kind })]) });
    let result;
    try {
      result = await this.#provider.open(this.#options.local, abort.signal);
    } catch (error) {
      if (generation !== this.#generation) return;
      const notes = [errorNote(error)];
      if (error instanceof ConfigError || error instanceof ValidationError) {
        // Retrying cannot fix a setting; wait for the user to change it.
        this.#phase = 'waiting';
        this.#update({ state: 'error', ...messageSaid(notes) });
        return;
      }
      this.#scheduleOpen(notes, 'error');
      return;
    }
    if (generation !== this.#generation) return;
    this.#phase = 'open';
    this.#warning = result.warning ? (result.warningNote ?? errorNote({ message: result.warning })) : null;
    this.#setPublicBaseUrl(result.publicBaseUrl);
    if (result.publicBaseUrl === null) {
      this.#reopen.reset();
      this.#update({
        state: 'off',
        ...messageSaid([note('tunnelNone')]),
        uploads: 'off',
        ...uploadsSaid([note(this.#options.uploadUrl ? 'uploadsLocalOnly' : 'uploadsOff')]),
      });
      return;
    }
    this.#update({ state: 'connecting', ...messageSaid([note('tunnelChecking', { url: result.publicBaseUrl })]) });
    await this.#check(generation);
  }

  async #check(generation: number): Promise<void> {
    const base = this.#publicBaseUrl;
    if (base === null || generation !== this.#generation) return;
    this.#checking = true;
    let result: SelfCheckResult;
    try {
      result = await checkSelf({
        url: this.#options.selfCheckUrl(base),
        expectedId: this.#options.expectedId,
        ...(this.#options.signProbe ? { signProbe: this.#options.signProbe } : {}),
        timeoutMs: this.#options.checkTimeoutMs ?? 10_000,
        signal: this.#abort?.signal,
        connectTo: this.#options.connectTo,
      });
    } finally {
      this.#checking = false;
    }
    if (generation !== this.#generation || this.#phase !== 'open') return;
    const lastCheckedAt = this.#now().toISOString();
    if (result.ok) {
      this.#failedChecks = 0;
      this.#reopen.reset();
      const reachable =
        this.#provider.kind === 'url'
          ? note('tunnelReachableOwnUrl')
          : note('tunnelReachable', { provider: this.#provider.kind });
      const notes = [this.#warning ?? reachable];
      const browser = await this.#checkUploads(base);
      if (generation !== this.#generation || this.#phase !== 'open') return;
      this.#update({ state: 'reachable', lastCheckedAt, ...messageSaid(notes), ...browser });
      this.#schedule(() => void this.#check(generation), this.#options.checkIntervalMs ?? 60_000);
      return;
    }
    this.#failedChecks++;
    const max = this.#options.maxFailedChecks ?? 3;
    this.#update({
      state: 'unreachable',
      lastCheckedAt,
      ...messageSaid(result.notes),
      ...this.#uploadsDown(base, result.notes),
    });
    if (this.#failedChecks >= max) {
      this.#reconnect([...result.notes, note('tunnelFailedChecks', { count: this.#failedChecks })], 'unreachable');
      return;
    }
    this.#schedule(() => void this.#check(generation), this.#options.retryCheckIntervalMs ?? 10_000);
  }

  /**
   * The upload path while the public URL itself does not answer: an "ok" from an earlier check would promise
   * uploads that now fail, so it turns into "blocked" with the reason ("off" stays off).
   */
  #uploadsDown(
    base: string,
    reason: Note[],
  ): Partial<Pick<TunnelStatus, 'uploads' | 'uploadsMessage' | 'uploadsNotes'>> {
    if (this.#status.uploads !== 'ok') return {};
    return { uploads: 'blocked', ...uploadsSaid([note('browserDown', { where: base }), ...reason]) };
  }

  /** The upload path as a browser sees it (see browser-check.ts), once the webhook path is known to work. */
  async #checkUploads(base: string): Promise<Pick<TunnelStatus, 'uploads' | 'uploadsMessage' | 'uploadsNotes'>> {
    if (!this.#options.uploadUrl) return { uploads: 'off', ...uploadsSaid([note('uploadsOff')]) };
    const origin = this.#options.uploadOrigins?.()[0];
    if (!origin) return { uploads: 'off', ...uploadsSaid([note('uploadsNoOrigin')]) };
    this.#checking = true;
    try {
      const result = await checkBrowserUpload({
        url: this.#options.uploadUrl(base),
        origin,
        timeoutMs: this.#options.checkTimeoutMs ?? 10_000,
        signal: this.#abort?.signal,
        connectTo: this.#options.connectTo,
      });
      return { uploads: result.uploads, ...uploadsSaid(result.notes) };
    } finally {
      this.#checking = false;
    }
  }

  /** Closes the provider, then waits the backoff delay and opens it again. */
  #reconnect(reason: Note[], state: TunnelState = 'connecting'): void {
    this.#generation++;
    this.#phase = 'waiting';
    this.#clearTimer();
    this.#abort?.abort();
    const generation = this.#generation;
    void this.#provider
      .close()
      .catch((error: unknown) => this.#warnClose(error))
      .then(() => {
        if (generation === this.#generation) this.#scheduleOpen(reason, state);
      });
  }

  #scheduleOpen(reason: Note[], state: TunnelState): void {
    this.#phase = 'waiting';
    this.#clearTimer();
    const generation = this.#generation;
    const scheduled = this.#reopen.retry(() => {
      if (generation === this.#generation && this.#phase === 'waiting') void this.#open();
    });
    // No deadline and no signal: the loop always schedules.
    const { attempt, delayMs } = scheduled!;
    const retrying =
      delayMs < 1000
        ? note('retryingMs', { ms: delayMs })
        : note('retryingSeconds', { seconds: Math.round(delayMs / 100) / 10 });
    this.#update({
      state,
      ...messageSaid([...reason, retrying]),
      ...this.#uploadsDown(this.#publicBaseUrl ?? 'the public URL', reason),
    });
    this.emit('reconnect-scheduled', { attempt, delayMs, reason: notesText(reason) });
  }

  #setPublicBaseUrl(base: string | null): void {
    const previous = this.#announcedUrl;
    const current = base === null ? null : this.#options.webhookUrl(base);
    this.#publicBaseUrl = base;
    this.#announcedUrl = current;
    const uploadUrl = base !== null && this.#options.uploadUrl ? this.#options.uploadUrl(base) : null;
    this.#status = { ...this.#status, publicUrl: current, uploadUrl };
    if (previous !== current) this.emit('url-changed', { previous, current, publicBaseUrl: base });
  }

  #update(patch: Partial<TunnelStatus>): void {
    const next: TunnelStatus = { ...this.#status, ...patch };
    next.registered = next.publicUrl !== null && next.publicUrl === this.#registeredUrl;
    this.#status = next;
    this.emit('status', { ...next });
  }

  #schedule(fn: () => void, ms: number): void {
    this.#clearTimer();
    this.#timer = setTimeout(() => {
      this.#timer = null;
      fn();
    }, ms);
    this.#timer.unref();
  }

  /** A tunnel that will not close is replaced anyway; the line keeps a leaking provider visible. */
  #warnClose(error: unknown): void {
    (this.#options.log ?? silentLogger).warn(`tunnel: closing the previous tunnel failed: ${describeError(error)}`);
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#reopen.cancel();
  }
}

/** The status message and its notes, always set together. */
function messageSaid(notes: Note[] | null): Pick<TunnelStatus, 'message' | 'messageNotes'> {
  return { message: notes ? notesText(notes) : null, messageNotes: notes };
}

function uploadsSaid(notes: Note[] | null): Pick<TunnelStatus, 'uploadsMessage' | 'uploadsNotes'> {
  return { uploadsMessage: notes ? notesText(notes) : null, uploadsNotes: notes };
}
