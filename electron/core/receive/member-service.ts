/**
 * The one member service behind every face of a studio member (the tray app and `tally serve` through the app's
 * StudioHost, `tally follow` directly), as receive-service.ts is for receivers: it reads the team servers, the
 * team credentials (environment, then keychain) and the S3 settings the same way for all, runs the StudioFollower
 * that mirrors the studio's recordings, judges the member's health (member-health.ts: the team link, the mirror,
 * the folder's disk; never a receiver port, which a member does not run) and answers `tally status` for
 * `tally follow`. A face only prints or shows its one typed event stream (`MemberEvents`).
 */
import { EventEmitter } from 'node:events';
import type { CredentialStore } from '../credentials.js';
import { ConfigError } from '../errors.js';
import type { HealthView } from '../health-view.js';
import { lineLogger, silentLogger, type Logger } from '../logger.js';
import { errorNote, note, type Note } from '../notes.js';
import { StudioFollower, type FollowerEvents, type FollowerOptions } from '../studio/follower.js';
import { s3FromEnv } from '../studio/store.js';
import { resolveTeamCredentials } from '../studio/team-credentials.js';
import { parseTeamUrls, type TeamCredentials } from '../studio/team.js';
import type { Face } from './control.js';
import { traceFollower } from './event-trail.js';
import { MemberHealth } from './member-health.js';
import type { MemberFacts } from './health.js';

/** The member's link to the team server as its health shows it (and the app's Studio view). */
export type MemberLink = MemberFacts['studio'];

export interface MemberServiceOptions {
  /** Which face runs the member: `follow` answers `tally status` itself; the app's receive service answers for it. */
  face: Face;
  /** TALLY_HOME: the member's ledger, lock and ID, and where `tally status` finds `tally follow`. */
  home: string;
  /** The team's servers, comma-separated (`--team`, Settings → Studio → Team servers). */
  team: string;
  /** How messages name the team servers field: the flag (default `--team`) or the Settings field's note. */
  teamField?: string | Note;
  /** The folder recordings are mirrored into. */
  folder: string;
  /** This member's name on the team server. */
  name: string;
  env: NodeJS.ProcessEnv;
  /** The keychain, where "tally login --team" and Settings keep the team credentials; null when there is none. */
  keychain: CredentialStore | null;
  clientSubfolder?: string;
  rateBytesPerSec?: number;
  /**
   * Whether the producer acknowledged a recording the member missed (the app: removed its row from the list); until
   * then the health warns. Without it the warning stands for a day.
   */
  acknowledged?: (identity: string) => boolean;
  /** Keep the team's list of recordings for a view (the tray app). */
  catalogue?: boolean;
  log?: Logger | ((line: string) => void);
  /** The event trail: the mirror's events (connection, each recording started, saved or failed) and health changes. */
  trail?: Logger;
  /** Connection retries, transfer timeouts and lag readings (tests shorten them). */
  tuning?: Pick<FollowerOptions, 'retry' | 'idleTimeoutMs' | 'checkpointBytes' | 'lagWarnMs' | 'lagCheckMs'>;
}

/** The member's one event stream: what the follower says, and the member's health when it changes. */
export interface MemberEvents extends FollowerEvents {
  health: [view: HealthView, previous: HealthView | null];
  /** The team link changed (connecting, connected, unreachable with why, connected with standing warnings). */
  link: [link: MemberLink];
}

/**
 * A member's team URLs as the faces take them: the same parser for `--team a,b,c` and the Settings field, the first
 * server carrying the credentials. Throws a ConfigError naming the field.
 */
export function memberTeamUrls(team: string, field: string | Note = '--team'): { url: URL; servers: URL[] } {
  return parseTeamUrls(team, field);
}

export class MemberService extends EventEmitter<MemberEvents> {
  readonly #opts: MemberServiceOptions;
  readonly #url: URL;
  readonly #servers: URL[];
  readonly #log: Logger;
  readonly #health: MemberHealth;
  #follower: StudioFollower | null = null;
  #link: MemberLink = { state: 'connecting', reason: [] };
  readonly #warnings = new Map<string, Note>();
  #started = false;
  #stopped = false;
  #stopping: Promise<void> | null = null;

  /** Reads the team URLs at once (a ConfigError naming the field when they are wrong); starts nothing. */
  constructor(opts: MemberServiceOptions) {
    super();
    this.#opts = opts;
    ({ url: this.#url, servers: this.#servers } = memberTeamUrls(opts.team, opts.teamField));
    this.#log = typeof opts.log === 'function' ? lineLogger(opts.log) : (opts.log ?? silentLogger);
    this.#health = new MemberHealth(opts.home, opts.folder, opts.trail);
    if (opts.acknowledged) this.#health.acknowledged = opts.acknowledged;
    this.#health.on('health', (view, previous) => this.emit('health', view, previous));
  }

  /** The first team server (the one the credentials are bound to). */
  get url(): URL {
    return this.#url;
  }

  /** The team link as the health judges it: connected with standing warnings is `warning`, their notes said. */
  get link(): MemberLink {
    const warned = [...this.#warnings.values()];
    if (this.#link.state === 'connected' && warned.length > 0) return { state: 'warning', reason: warned };
    return this.#link;
  }

  /** The member's health now. */
  health(): HealthView {
    return this.#health.view();
  }

  /** What this member has mirrored or is mirroring, and the team's announcements (for views). */
  records(): ReturnType<StudioFollower['records']> {
    return this.#follower?.records() ?? [];
  }

  announcements(): ReturnType<StudioFollower['announcements']> {
    return this.#follower?.announcements() ?? [];
  }

  /**
   * Resolves the team credentials, starts the health (and `tally status` for `tally follow`), then connects and
   * mirrors: resolves once connected and ready, retrying while the team server cannot be reached. Throws what only
   * the user can fix (refused credentials, TLS, a folder that cannot be written, a damaged keychain entry).
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('The member service was started already.');
    this.#started = true;
    const opts = this.#opts;
    await this.#health.start((line) => this.#log.warn(line), opts.face === 'follow' ? 'follow' : null);
    const credentials = await this.#credentials();
    if (this.#stopped) return;
    const follower = new StudioFollower({
      url: this.#url,
      servers: this.#servers,
      credentials,
      folder: opts.folder,
      name: opts.name,
      stateDir: opts.home,
      s3: s3FromEnv(opts.env),
      ...(opts.clientSubfolder ? { clientSubfolder: opts.clientSubfolder } : {}),
      ...(opts.rateBytesPerSec ? { rateBytesPerSec: opts.rateBytesPerSec } : {}),
      ...(opts.catalogue ? { catalogue: true } : {}),
      log: this.#log,
      ...opts.tuning,
    });
    this.#follower = follower;
    if (opts.trail) traceFollower(follower, opts.trail);
    this.#watch(follower);
    try {
      await follower.start();
    } catch (error) {
      if (!this.#stopped) this.#setLink('error', [errorNote(error)]);
      throw error;
    }
  }

  /** Stops mirroring (unfinished transfers resume on the next start), the health and `tally status`. */
  stop(): Promise<void> {
    this.#stopped = true;
    // Once: a signal's stop and the face's own both wait for the same end (the ledger closed, the lock released).
    this.#stopping ??= (async () => {
      try {
        await this.#follower?.stop();
      } finally {
        await this.#health.stop();
      }
    })();
    return this.#stopping;
  }

  /**
   * The team credentials: TALLY_TEAM_* first, then the keychain entry bound to the first server. No keychain on
   * this computer is fine for an open team server; a damaged entry or a bad environment is not.
   */
  async #credentials(): Promise<TeamCredentials | null> {
    try {
      return await resolveTeamCredentials(this.#url, this.#opts.env, this.#opts.keychain);
    } catch (error) {
      const message = error instanceof Error ? error.message : '';
      if (error instanceof ConfigError && /keychain|Secret Service/i.test(message) && !/damaged/.test(message)) {
        return null;
      }
      throw error;
    }
  }

  /** Every follower event goes out as it came (one stream), and keeps the member's health. */
  #watch(follower: StudioFollower): void {
    const health = this.#health;
    const forward = <K extends keyof FollowerEvents>(event: K) =>
      // Node's typed EventEmitter cannot relate a generic key to its arguments; MemberEvents extends FollowerEvents.
      follower.on(event, ((...args: never[]) =>
        (this.emit as (e: K, ...a: never[]) => boolean)(event, ...args)) as never);
    for (const event of [
      'ready',
      'waiting',
      'started',
      'progress',
      'saved',
      'failed',
      'connection',
      'answering',
      'catalogue',
      'warning',
      'warningCleared',
      'missed',
    ] as const) {
      forward(event);
    }
    follower.on('ready', () => this.#setLink('connected', []));
    follower.on('waiting', (info) => this.#setLink('unreachable', [info.note ?? errorNote({ message: info.message })]));
    // A server that stopped answering is named until the client is on another one (not only "connection lost").
    const unanswered = (): Note | null => {
      const answer = follower.answer;
      if (answer?.answering !== false) return null;
      return answer.note ?? (answer.message ? errorNote({ message: answer.message }) : null);
    };
    follower.on('connection', (state) =>
      state === 'disconnected'
        ? this.#setLink('unreachable', [unanswered() ?? note('teamConnectionLost')])
        : this.#setLink('connected', []),
    );
    // A connection open while nothing answers on it (a hung server, a cluster that cannot store) is not green.
    follower.on('answering', (a) =>
      a.answering
        ? this.#setLink('connected', [])
        : this.#setLink('unreachable', [a.note ?? errorNote({ message: a.message ?? 'not answering' })]),
    );
    follower.on('saved', (e) => health.saved(e.identity));
    follower.on('missed', (recordings) => health.missed(recordings.map((a) => a.identity)));
    follower.on('failed', (info) => health.failed(info.identity, info.message, info.willRetry, info.channelId));
    follower.on('warning', (w) => {
      this.#warnings.set(w.kind, w.note);
      health.warning(w.kind, w.note);
      this.emit('link', this.link);
    });
    follower.on('warningCleared', (kind) => {
      if (!this.#warnings.delete(kind)) return;
      health.cleared(kind);
      this.emit('link', this.link);
    });
  }

  #setLink(state: MemberLink['state'], reason: Note[]): void {
    this.#link = { state, reason };
    this.#health.link(state, reason);
    this.emit('link', this.link);
  }
}
