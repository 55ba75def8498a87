/**
 * The team's NATS server: its URL, its credentials, the connection (with retries and backoff while it is
 * unreachable) and the JetStream assets studio mode uses. Every name here is fixed, so a receiver and any
 * number of followers find each other by the URL alone.
 *
 *   stream   TALLY_STUDIO   subject tally.studio.saved   one announcement per recording, message ID = identity
 *   KV       tally-studio-claims                         one key per recording: who publishes it, how far it got
 *   objects  tally-studio   (the default store)          the recording's bytes under the identity
 */
import { retrying, type BackoffPolicy } from '../backoff.js';
import { nested, note, type Note } from '../notes.js';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { ConfigError, TallyError } from '../errors.js';
import { describeError } from '../logger.js';
import { registerSecret } from '../redact.js';

export const STUDIO_STREAM = 'TALLY_STUDIO';
export const STUDIO_SUBJECT = 'tally.studio.saved';
export const CLAIMS_BUCKET = 'tally-studio-claims';
export const OBJECT_BUCKET = 'tally-studio';
/** Default retention of announcements and stored recordings: 7 days. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** How often the client asks the server for a pong, and how many may go unanswered before it moves on. */
export const PING_INTERVAL_MS = 5_000;
export const MAX_PINGS_OUT = 2;

/** The team server could not be reached (given up, or stopped while retrying). */
export class TeamUnreachableError extends TallyError {
  readonly code = 'team_unreachable';
}

/**
 * The team server refused this computer's credentials (or asked for some and got none). Retrying with the same
 * ones cannot help: the faces say so once and wait for new credentials. `reason` is the server's own word.
 */
export class TeamAuthError extends ConfigError {
  constructor(
    readonly where: string,
    readonly reason: string,
    readonly sentCredentials: boolean,
  ) {
    super(
      `The team server ${where} ${sentCredentials ? 'refused the credentials' : 'asks for credentials and none are set'} (${reason}): store them with "tally login --team ${where}" or set TALLY_TEAM_USER + TALLY_TEAM_PASSWORD (or TALLY_TEAM_TOKEN).`,
    );
  }

  /** The same for the tray app, where the credentials are set in Settings → Studio. */
  get appNote(): Note {
    return note(this.sentCredentials ? 'teamRefused' : 'teamAsks', { reason: this.reason, where: this.where });
  }
}

/** tls:// to a server without TLS, or nats:// to one that requires it: the URL must change, not the network. */
export class TeamTlsError extends ConfigError {
  constructor(
    readonly where: string,
    readonly fix: string,
    detail: 'tls' | 'plain',
  ) {
    super(`The team server ${where} ${detail === 'tls' ? 'requires TLS' : 'does not offer TLS'}: use --team ${fix}.`);
    this.#requiresTls = detail === 'tls';
  }

  readonly #requiresTls: boolean;

  /** The same for the tray app, where the URL is set in Settings → Studio. */
  get appNote(): Note {
    return note(this.#requiresTls ? 'teamNeedsTls' : 'teamNoTls', { where: this.where, fix: this.fix });
  }
}

/** The team server runs without JetStream (`nats-server` started without `-js`): only its admin can fix it. */
export class TeamNoJetStreamError extends ConfigError {}

/** JetStream's own "not enabled" answer as the one line that names the fix; anything else as it is. */
export function jetStreamProblem(nc: NatsConnection, error: unknown): unknown {
  const name = (error as { name?: string }).name ?? '';
  if (name === 'JetStreamNotEnabled' || /jetstream (is )?not enabled/i.test(describeError(error))) {
    return new TeamNoJetStreamError(note('teamNoJetStream', { where: `nats://${nc.getServer()}` }));
  }
  return error;
}

/**
 * A JetStream request the cluster could not answer yet: timed out or found no responder (a new leader being
 * elected after a server went down), or too few servers up to place a replicated stream or bucket. Waiting
 * helps; refused credentials, a TLS mismatch or a server without JetStream do not (ConfigErrors).
 */
export function jetStreamBusy(error: unknown): boolean {
  if (error instanceof ConfigError || !(error instanceof Error)) return false;
  if (error.name === 'TimeoutError' || error.name === 'NoRespondersError') return true;
  return /\btimeout\b|no responders|\b503\b|insufficient resources|no suitable peers|temporarily unavailable/i.test(
    describeError(error),
  );
}

/** NATS user/password or token; tls:// URLs carry TLS themselves. Never logged, never in settings. */
export interface TeamCredentials {
  user?: string;
  password?: string;
  token?: string;
}

/** The URL of the team server, checked: nats:// or tls://, a host, a port; no credentials inside. */
export function parseTeamUrl(input: string, flag: string | Note = '--team'): URL {
  // The app names its field as a note, so the popover says the field's name in its own language too.
  const named = typeof flag === 'string' ? { flag } : nested('flag', flag);
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new ConfigError(note('teamUrlNotUrl', { ...named, input }));
  }
  if (url.protocol !== 'nats:' && url.protocol !== 'tls:') {
    throw new ConfigError(note('teamUrlScheme', { ...named, scheme: url.protocol }));
  }
  if (!url.hostname) throw new ConfigError(note('teamUrlNoHost', named));
  if (url.username || url.password) throw new ConfigError(note('teamUrlCredentials', named));
  if (url.pathname && url.pathname !== '/') throw new ConfigError(note('teamUrlPath', named));
  return url;
}

/**
 * A team server or a cluster of them: `nats://a:4222,nats://b:4222,nats://c:4222`. The first is the one the
 * credentials are bound to and the one named in lines; all of them are tried (the client also learns the
 * cluster's other servers from the one it reaches). All must use the same scheme. The one parser of a server
 * list: `--team` on the command line, Settings → Studio → Team servers in the app (which names its field as a note).
 */
export function parseTeamUrls(input: string, flag: string | Note = '--team'): { url: URL; servers: URL[] } {
  const named = typeof flag === 'string' ? { flag } : nested('flag', flag);
  const servers = input
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => parseTeamUrl(part, flag));
  const url = servers[0];
  if (!url) throw new ConfigError(note('teamUrlNotUrl', { ...named, input }));
  if (servers.some((s) => s.protocol !== url.protocol)) {
    throw new ConfigError(note('teamUrlsMixedScheme', named));
  }
  return { url, servers };
}

/** The list as the settings keep it and the app shows it: `nats://host:port` each, in the order given. */
export function teamServerList(servers: readonly URL[]): string[] {
  return servers.map((s) => `${s.protocol}//${s.host}`);
}

/** Credentials from TALLY_TEAM_USER + TALLY_TEAM_PASSWORD or TALLY_TEAM_TOKEN; null when none is set. */
export function teamCredentialsFromEnv(env: NodeJS.ProcessEnv): TeamCredentials | null {
  const user = env.TALLY_TEAM_USER?.trim() ?? '';
  const password = env.TALLY_TEAM_PASSWORD ?? '';
  const token = env.TALLY_TEAM_TOKEN?.trim() ?? '';
  registerSecret(user, password, token);
  if (token && (user || password)) {
    throw new ConfigError('Set either TALLY_TEAM_TOKEN or TALLY_TEAM_USER + TALLY_TEAM_PASSWORD, not both.');
  }
  if (token) return { token };
  if (user || password) {
    if (!user || !password) {
      throw new ConfigError(
        `${user ? 'TALLY_TEAM_PASSWORD' : 'TALLY_TEAM_USER'} is not set: set both TALLY_TEAM_USER and TALLY_TEAM_PASSWORD, or neither.`,
      );
    }
    return { user, password };
  }
  return null;
}

/** A failed connection attempt, before the next one: `note` is the message for the popover. */
export interface TeamRetry {
  message: string;
  note?: Note;
  attempt: number;
  delayMs: number;
}

export interface TeamConnectOptions {
  url: URL;
  /** Every server of a cluster (`url` among them); `url` alone when absent. */
  servers?: URL[];
  credentials: TeamCredentials | null;
  /** A name the server shows for this connection (monitoring only). */
  name: string;
  /** Ends the retries (stop, Ctrl+C). */
  signal?: AbortSignal;
  /** Called before each wait while the server cannot be reached: one line for the user. */
  onRetry?: (info: TeamRetry) => void;
  /** First delay between attempts (default 500 ms), doubled up to `maxDelayMs` (default 30 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Give up after this many failed attempts (default: never, until the signal aborts). */
  maxAttempts?: number;
}

/** The server list for the client: tls:// becomes the nats:// address with TLS required. */
function serverOf(url: URL): string {
  return `${url.hostname.includes(':') ? `[${url.hostname}]` : url.hostname}:${url.port || '4222'}`;
}

/** The failed attempt as an error: TeamAuthError / TeamTlsError (final), TeamUnreachableError (retried). */
function teamConnectError(url: URL, error: unknown, sentCredentials: boolean): TallyError {
  const code = (error as { code?: string }).code ?? '';
  const text = describeError(error);
  const host = serverOf(url);
  const where = `${url.protocol}//${host}`;
  if (/authoriz|authentic|permissions/i.test(text) || /AUTH/i.test(code)) {
    return new TeamAuthError(where, text.split('\n')[0]!.slice(0, 120), sentCredentials);
  }
  if (/does not support 'tls'|not support tls/i.test(text)) {
    return new TeamTlsError(where, `nats://${host}`, 'plain');
  }
  if (/requires tls|tls required/i.test(text)) {
    return new TeamTlsError(where, `tls://${host}`, 'tls');
  }
  if (/ECONNREFUSED|CONNECTION_REFUSED|connection refused/i.test(text + code)) {
    return new TeamUnreachableError(note('teamConnectionRefused', { where }));
  }
  if (/ENOTFOUND|EAI_AGAIN/i.test(text)) {
    return new TeamUnreachableError(note('teamUnknownHost', { host: url.hostname }));
  }
  return new TeamUnreachableError(note('teamUnreachable', { where, detail: text.split('\n')[0]?.slice(0, 200) ?? '' }));
}

/**
 * Connects to the team server, retrying with exponential backoff while it is unreachable (never on refused
 * credentials or a TLS mismatch: those need the user, and throw TeamAuthError / TeamTlsError). After the first connection the client itself reconnects forever.
 */
export async function connectTeam(opts: TeamConnectOptions): Promise<NatsConnection> {
  const backoff: BackoffPolicy = { baseMs: opts.baseDelayMs ?? 500, maxMs: opts.maxDelayMs ?? 30_000 };
  const creds = opts.credentials ?? {};
  const said = (failure: Error) => (failure instanceof TeamUnreachableError ? failure.note : undefined);
  try {
    return await retrying(
      async () => {
        try {
          return await connect({
            servers: (opts.servers?.length ? opts.servers : [opts.url]).map(serverOf),
            name: opts.name,
            ...(creds.token ? { token: creds.token } : {}),
            ...(creds.user ? { user: creds.user, pass: creds.password ?? '' } : {}),
            ...(opts.url.protocol === 'tls:' ? { tls: {} } : {}),
            reconnect: true,
            maxReconnectAttempts: -1,
            reconnectTimeWait: 500,
            // Also each reconnection's: the client's first move after a server stops answering dials that
            // same server once more (nats.js re-selects the server it started on), and waits this long on it.
            timeout: 3_000,
            // A server that accepts and never answers (hung, SIGSTOPped, a half-dead link) is left after
            // PING_INTERVAL_MS * (MAX_PINGS_OUT + 1) without a pong, for another server of the list; without them
            // the client kept a hung server for good (the default is a ping every 2 minutes). Issue 30.
            pingInterval: PING_INTERVAL_MS,
            maxPingOut: MAX_PINGS_OUT,
            // Otherwise every request, publish ack and timer makes an Error up front for its stack (4 per
            // recording a receiver shares, about 2 % of its CPU in a burst; issue 22). Messages stay the same.
            noAsyncTraces: true,
          });
        } catch (error) {
          throw teamConnectError(opts.url, error, Boolean(creds.token || creds.user));
        }
      },
      {
        policy: backoff,
        retries: opts.maxAttempts === undefined ? Infinity : opts.maxAttempts - 1,
        // Refused credentials or a TLS mismatch need the user: never retried.
        shouldRetry: (failure) => !(failure instanceof ConfigError),
        onRetry: (failure, attempt, delayMs) => {
          const note = said(failure as Error);
          opts.onRetry?.({ message: (failure as Error).message, ...(note ? { note } : {}), attempt, delayMs });
        },
        ...(opts.signal
          ? {
              signal: opts.signal,
              aborted: () => new TeamUnreachableError('Stopped before the team server could be reached.'),
            }
          : {}),
      },
    );
  } catch (failure) {
    if (failure instanceof ConfigError || !(failure instanceof Error)) throw failure;
    // The retries ran out (or it was stopped): one line, as the popover and the CLI say it.
    throw failure instanceof TeamUnreachableError
      ? failure
      : new TeamUnreachableError(said(failure) ?? failure.message);
  }
}

const nanos = (ms: number) => ms * 1_000_000;

/**
 * Creates the announcement stream when it does not exist yet (a follower may start before the receiver). An
 * existing stream keeps its configuration, except that the receiver (`owner`) applies its retention.
 */
export async function ensureStudioStream(
  nc: NatsConnection,
  opts: { retentionMs: number; owner: boolean; replicas?: number | undefined },
): Promise<JetStreamManager> {
  try {
    return await ensureStream(nc, opts);
  } catch (error) {
    throw jetStreamProblem(nc, error);
  }
}

async function ensureStream(
  nc: NatsConnection,
  opts: { retentionMs: number; owner: boolean; replicas?: number | undefined },
): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const config = {
    name: STUDIO_STREAM,
    subjects: [STUDIO_SUBJECT],
    max_age: nanos(opts.retentionMs),
    // Repeats within the hour are dropped by message ID; the KV claim covers everything beyond.
    duplicate_window: nanos(Math.min(opts.retentionMs, 60 * 60 * 1000)),
    ...(opts.replicas ? { num_replicas: opts.replicas } : {}),
  };
  const existing = await jsm.streams.info(STUDIO_STREAM).catch((error: unknown) => {
    if (/not found/i.test(describeError(error))) return null;
    throw error;
  });
  if (!existing) {
    await jsm.streams.add(config).catch(async (error: unknown) => {
      // Two members creating it at once: the other one won, which is just as good.
      if (!/already in use|exists/i.test(describeError(error))) throw error;
    });
  } else if (
    opts.owner &&
    (existing.config.max_age !== config.max_age ||
      (opts.replicas !== undefined && existing.config.num_replicas !== opts.replicas))
  ) {
    await jsm.streams.update(STUDIO_STREAM, { ...existing.config, ...config });
  }
  return jsm;
}

/**
 * The receiver's retention on the claims bucket and the object store too. The client creates a bucket with its
 * TTL but keeps an existing one as it is, so a changed `--retention` would reach the announcements only: the
 * buckets' backing streams get the new max age here, everything else in their configuration (replicas) kept.
 * A bucket not created yet is left to its first use, which creates it with the same retention.
 */
export async function applyBucketRetention(
  jsm: JetStreamManager,
  retentionMs: number,
  replicas?: number,
): Promise<void> {
  for (const stream of [`KV_${CLAIMS_BUCKET}`, `OBJ_${OBJECT_BUCKET}`]) {
    const existing = await jsm.streams.info(stream).catch((error: unknown) => {
      if (/not found/i.test(describeError(error))) return null;
      throw error;
    });
    const moreReplicas = replicas !== undefined && existing && existing.config.num_replicas !== replicas;
    if (existing && (existing.config.max_age !== nanos(retentionMs) || moreReplicas)) {
      await jsm.streams.update(stream, {
        ...existing.config,
        max_age: nanos(retentionMs),
        ...(replicas !== undefined ? { num_replicas: replicas } : {}),
      });
    }
  }
}

/** `--replicas`: how many servers of a cluster keep each stream, bucket and object store (1, 3 or 5). */
export function parseReplicas(input: string, flag = '--replicas'): number {
  const n = Number(input.trim());
  if (![1, 3, 5].includes(n)) throw new ConfigError(`${flag} must be 1, 3 or 5 (got "${input}").`);
  return n;
}

/** Seconds, minutes, hours or days (`90m`, `12h`, `7d`) to milliseconds, for `--retention`. */
export function parseRetention(input: string, flag = '--retention'): number {
  const match = /^(\d+(?:\.\d+)?)\s*(m|h|d)$/i.exec(input.trim());
  if (!match) throw new ConfigError(`${flag} must be a duration such as 12h or 7d (got "${input}").`);
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2]!.toLowerCase() as 'm' | 'h' | 'd'];
  const ms = Math.round(Number(match[1]) * unit);
  if (ms < 60 * 60 * 1000 || ms > 365 * 86_400_000) {
    throw new ConfigError(`${flag} must be between 1h and 365d (got "${input}").`);
  }
  return ms;
}

/**
 * The server's clock now, as JetStream itself reports it (epoch ms): a time the server stamped (a message's,
 * an entry's) is judged against this, never against this computer's clock, which may be minutes or hours
 * off (issue 30: a receiver 5 minutes fast removed another's upload in progress). A server that says its time
 * in the stream's info (`ts`, nats-server 2.10+) is asked once; an older one stamps the creation of a consumer
 * that delivers nothing, made and removed here.
 */
export async function serverNow(jsm: JetStreamManager, stream: string): Promise<number> {
  const info = (await jsm.streams.info(stream)) as { ts?: string };
  const said = info.ts ? Date.parse(info.ts) : NaN;
  if (Number.isFinite(said)) return said;
  const probe = await jsm.consumers.add(stream, {
    ack_policy: AckPolicy.None,
    deliver_policy: DeliverPolicy.New,
    mem_storage: true,
    // Gone by itself should the delete below not arrive.
    inactive_threshold: nanos(30_000),
  });
  await jsm.consumers.delete(stream, probe.name).catch(() => undefined);
  const created = Date.parse(probe.created);
  if (!Number.isFinite(created)) throw new Error(`The team server stamped no time on a consumer of ${stream}.`);
  return created;
}
