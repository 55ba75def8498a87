/**
 * Studio mode in the tray app: asks the receive service for a publisher beside its pipelines when this computer
 * is the studio's receiver (the service runs it, as it does for `tally listen --team`), or runs a follower into
 * the recordings folder when it follows a studio, as the studio setting (through pipelineOptions' studio spec)
 * says. Owns the studio requests of the contract and the `studio:changed` view.
 * The team credentials go to the keychain (bound to their server) and never reach the renderer.
 */
import { hostname } from 'node:os';
import { errorNote, note, said, type ErrorView, type Note } from '../../contract.js';
import type {
  RecordingView,
  RequestHandlers,
  StudioInput,
  StudioMemberView,
  StudioRecordingView,
  StudioView,
  TeamCredentialsInput,
} from '../../contract.js';
import { CredentialStore, type SecretStore } from '../credentials.js';
import { ConfigError, TallyError } from '../errors.js';
import { describeError, lineLogger, type Logger } from '../logger.js';
import type { PipelineStudio } from '../pipeline/options.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import type { MemberHealthSource, PublisherSetup } from '../receive/receive-service.js';
import type { PublisherLink } from '../studio/publisher-link.js';
import { studioLinkOf, type StudioLink } from '../studio/studio-link.js';
import { MemberService } from '../receive/member-service.js';
import {
  clearTeamCredentials,
  resolveTeamCredentials,
  saveTeamCredentials,
  storedTeamSummary,
} from '../studio/team-credentials.js';
import type { StudioPublisher } from '../studio/publisher.js';
import { parseS3Url, s3FromEnv } from '../studio/store.js';
import {
  TeamAuthError,
  TeamTlsError,
  TeamUnreachableError,
  connectTeam,
  parseTeamUrls,
  teamServerList,
} from '../studio/team.js';
import { followsStudio, type Settings, type SettingsStore } from '../settings.js';
import { errorView } from './core-messages.js';
import type { HiddenKeys } from './hidden-recordings.js';

/** Key prefix of the recordings a studio member mirrors, in the one key space of the Recordings list. */
export const STUDIO_KEY_PREFIX = 'studio:';

/** The app's name for the team servers field in messages (the CLI says `--team`). */
const STUDIO_URL = note('studioUrlField');

interface StudioHostOptions {
  secrets: SecretStore;
  env: NodeJS.ProcessEnv;
  home: string;
  log: (line: string) => void;
  /** The event trail (the mirror's events when this computer follows a studio). */
  trail?: Logger;
  emit: (view: StudioView) => void;
  settings: () => Settings;
  /** Writes the studio setting and reconciles (serialised by the app core). */
  save: (studio: Settings['studio']) => Promise<void>;
  error: (error: ErrorView) => void;
  publish: (setup: PublisherSetup | null) => Promise<void>;
  recordingChanged?: (view: RecordingView) => void;
  assertStorable?: () => void;
  linkChanged?: (link: StudioLink | null) => void;
  memberChanged?: (member: MemberHealthSource | null) => void;
}

/** What the app core hands over: its options, environment and settings, and its callbacks. */
export interface StudioCoreLinks {
  emit: (view: StudioView) => void;
  save: (studio: Settings['studio']) => Promise<void>;
  /** A studio failure the popover's status area shows (the receiver is not concerned). */
  error: (error: ErrorView) => void;
  /** Which publisher the receive service runs beside its pipelines (null: none); see `watchPublisher`. */
  publish: (setup: PublisherSetup | null) => Promise<void>;
  /** A mirrored recording's row in Recordings changed (a member's list is one list with the webhook's). */
  recordingChanged?: (view: RecordingView) => void;
  /**
   * The studio link for the health when no publisher runs (judged by studio/studio-link.ts), pushed whenever it changes; null
   * when studio mode is off. A running publisher's link the receive service judges itself (studio/publisher-link.ts).
   */
  linkChanged?: (link: StudioLink | null) => void;
  /**
   * The member service started (or its health changed) or stopped (null) while this computer follows a studio: its
   * health is the one the app shows (a member runs no receiver of its own).
   */
  memberChanged?: (member: MemberHealthSource | null) => void;
  /**
   * Throws when nothing can be stored (no OS keychain: the secrets are an in-memory stand-in), with the words the
   * service secret is refused with; absent where the secrets are always storable.
   */
  assertStorable?: () => void;
}

type Status = StudioView['status'];
type StudioHandlers = Pick<
  RequestHandlers,
  'studio:get' | 'studio:set' | 'studio:setCredentials' | 'studio:clearCredentials' | 'studio:test'
>;

export class StudioHost {
  readonly #opts: StudioHostOptions;
  readonly #store: CredentialStore;
  #key: string | null = null;
  /** The publisher the receive service runs now (watched for the view), and whether this host asked for one. */
  #publisher: StudioPublisher | null = null;
  /** The running publisher's link, judged in studio/publisher-link.ts and handed over with the publisher. */
  #link: PublisherLink | null = null;
  #publishing = false;
  /** The health's studio link as last pushed (linkChanged), so an unchanged one is not pushed again. */
  #pushedLink: string | undefined;
  /** The member service while this computer follows a studio (the one `tally follow` runs too). */
  #follower: MemberService | null = null;
  #status: Status = { state: 'off', message: null, notes: null };
  readonly #progress = new Map<string, number>();
  /** The member rows last pushed, by key, so only changed ones are pushed again. */
  readonly #pushed = new Map<string, string>();
  readonly #warnings = new Map<string, Note>();
  /** The rows the producer removed from the Recordings list, as the pipeline host (their owner) pushed them. */
  #hidden: HiddenKeys = { has: () => false };

  constructor(
    core: { secrets: SecretStore; home: string; log?: (line: string) => void; trail?: Logger },
    env: NodeJS.ProcessEnv,
    settings: SettingsStore,
    links: StudioCoreLinks,
  ) {
    const log = core.log ?? (() => {});
    this.#opts = {
      secrets: core.secrets,
      env,
      home: core.home,
      log,
      ...(core.trail ? { trail: core.trail } : {}),
      settings: () => settings.get(),
      ...links,
    };
    this.#store = new CredentialStore(core.secrets);
  }

  /**
   * The rows removed from the Recordings list, pushed by their owner (the pipeline host, through the app core)
   * whenever it keeps them elsewhere: a removed row is not pushed up again, and a removed missed recording is
   * acknowledged (the member's health stops warning of it). A live view: later removals are seen at once.
   */
  setHidden(keys: HiddenKeys): void {
    this.#hidden = keys;
  }

  /**
   * Registering a webhook URL by hand is refused on a studio member: the service keeps one URL per service, and
   * a member's would silently take the webhooks away from the studio's receiver.
   */
  assertMayRegister(): void {
    if (followsStudio(this.#opts.settings())) {
      throw new ConfigError(note('studioFollowerNoRegister'));
    }
  }

  handlers(): StudioHandlers {
    return {
      'studio:get': async () => this.view(),
      'studio:set': async (input) => this.#set(input),
      'studio:setCredentials': async (url, creds) => {
        // Without a keychain the stand-in would keep them in memory only: refused, never said to be stored.
        this.#opts.assertStorable?.();
        // Bound to the first server of a cluster, as `tally login --team a,b,c` does.
        await saveTeamCredentials(this.#store, parseTeamUrls(url, STUDIO_URL).url, toTeam(creds));
        this.#key = null; // new credentials: connect again
        await this.#opts.save(this.#opts.settings().studio);
        return this.view();
      },
      'studio:clearCredentials': async () => {
        await clearTeamCredentials(this.#store);
        return this.view();
      },
      'studio:test': async (url) => this.#test(url),
    };
  }

  /**
   * Asks for, replaces or withdraws the publisher, or starts, restarts or stops the follower, to match `spec`.
   * The receive service runs the publisher beside every pipeline it opens (a rebuilt pipeline gets a new one).
   * A follower mirrors into the folder the running pipeline saves to: `wanted` only while none runs (when a
   * change was refused and the previous setup reopened, recordings still go to the previous folder).
   */
  async reconcile(spec: PipelineStudio | null, pipeline: RecordingPipeline | null, wanted: string): Promise<void> {
    const folder = pipeline?.downloads.folder ?? wanted;
    const chosen = this.#opts.settings().studio;
    // Chosen as the receiver but held back (demo mode): a state of its own, so the status says so.
    const heldBack = !spec && chosen.mode === 'receiver' && chosen.servers.length > 0;
    const key = spec ? JSON.stringify([spec, spec.mode === 'follow' ? folder : null]) : heldBack ? 'held back' : null;
    // Asked for while no pipeline ran: said again once one does (the service runs it beside that one).
    const unstarted = spec?.mode === 'receiver' && pipeline !== null && !this.#publishing;
    if (key === this.#key && !unstarted) return;
    // Stopping fails when the old publisher's or follower's state folder went bad (its lock or ledger cannot be
    // released): that is the studio's error, not the receiver's, and the next reconcile starts afresh.
    try {
      await this.stop();
    } catch (error) {
      return this.#failed(error);
    }
    this.#key = key;
    if (!spec) return heldBack ? this.#setStatus('error', note('studioReceiverDemo')) : this.#setStatus('off');
    try {
      // The same parser as `--team a,b,c`: the first server carries the credentials, all of them are tried.
      const { url, servers } = parseTeamUrls(spec.servers.join(','), STUDIO_URL);
      const credentials = await resolveTeamCredentials(url, this.#opts.env, this.#store).catch(() => null);
      const log = lineLogger(this.#opts.log);
      this.#setStatus('connecting');
      if (spec.mode === 'receiver') {
        if (!pipeline) return this.#setStatus('error', note('studioNoReceiver'));
        const store =
          spec.store === 'nats'
            ? ({ kind: 'nats' } as const)
            : { kind: 's3' as const, ...parseS3Url(spec.store, 'The studio store'), ...s3FromEnv(this.#opts.env) };
        this.#publishing = true;
        await this.#opts.publish({
          key: key ?? '',
          options: {
            url,
            servers,
            ...(spec.replicas ? { replicas: spec.replicas } : {}),
            credentials,
            store,
            retentionMs: spec.retentionMs,
            stateDir: this.#opts.home,
            log,
            catalogue: true,
          },
        });
        return;
      }
      const follower = new MemberService({
        face: 'app',
        home: this.#opts.home,
        team: spec.servers.join(','),
        teamField: STUDIO_URL,
        folder,
        name:
          spec.name ??
          hostname()
            .replace(/[^A-Za-z0-9_.-]/g, '_')
            .slice(0, 64),
        env: this.#opts.env,
        keychain: this.#store,
        clientSubfolder: this.#opts.settings().clientUploadsSubfolder,
        log,
        // The mirror's events and the member's health changes in the app's event trail.
        ...(this.#opts.trail ? { trail: this.#opts.trail.child('follow') } : {}),
        catalogue: true,
        // A missed recording stays a warning until its row is removed from the list.
        acknowledged: (identity) => this.#hidden.has(`${STUDIO_KEY_PREFIX}${identity}`),
      });
      follower.on('missed', () => this.#changed());
      // The member's health is the one the app shows (its team link, mirror and disk; no receiver port).
      follower.on('health', () => this.#opts.memberChanged?.(follower));
      this.#watchWarnings(follower);
      follower.on('catalogue', () => this.#changed());
      follower.on('ready', () => this.#setStatus('connected'));
      follower.on('waiting', (w) => this.#setStatus('unreachable', w.note ?? errorNote(w)));
      follower.on('connection', (c) => this.#setStatus(c === 'disconnected' ? 'unreachable' : 'connected'));
      follower.on('answering', (a) =>
        a.answering ? this.#setStatus('connected') : this.#setStatus('unreachable', a.note ?? undefined),
      );
      follower.on('started', () => this.#changed());
      follower.on('progress', (p) => {
        this.#progress.set(p.identity, p.bytes);
        this.#changed();
      });
      follower.on('saved', (e) => {
        this.#progress.delete(e.identity);
        this.#changed();
      });
      this.#follower = follower;
      // Its health is the one the app shows from now on (handed down; the receive service reads it).
      this.#opts.memberChanged?.(follower);
      // Connecting may wait a long time for an unreachable server: it runs on, reconcile does not wait.
      void follower.start().catch((error: unknown) => {
        if (this.#follower !== follower) return;
        this.#setStatus('error', teamNote(error));
      });
    } catch (error) {
      this.#setStatus('error', teamNote(error));
    }
  }

  #failed(error: unknown): void {
    const why = said(note('studioFailed'), teamNote(error));
    this.#status = { state: 'error', message: why.text, notes: why.notes };
    this.#changed();
    this.#opts.log(why.text);
    this.#opts.error({ code: errorView(error).code, message: why.text });
  }

  async stop(): Promise<void> {
    const [publishing, follower] = [this.#publishing, this.#follower];
    this.#publishing = false;
    this.#follower = null;
    this.#key = null;
    if (follower) this.#opts.memberChanged?.(null);
    if (publishing) await this.#opts.publish(null);
    await follower?.stop();
  }

  /**
   * The receive service started a publisher beside a (new) pipeline, or stopped it (null): its events keep the
   * studio view and its status current (the service judges the health's studio link from the same events).
   */
  watchPublisher(publisher: StudioPublisher | null, link: PublisherLink | null = null): void {
    this.#publisher = publisher;
    this.#link = link;
    if (publisher) {
      // Its link is judged once (the PublisherLink handed over with it); these only say the view changed.
      const events = ['connected', 'connection', 'waiting', 'refused', 'warning', 'warningCleared'] as const;
      for (const event of [...events, 'published', 'alreadyShared', 'failed', 'catalogue', 'lag'] as const) {
        publisher.on(event, () => this.#changed());
      }
    }
    this.#changed();
  }

  /**
   * The status the Studio view shows: a running publisher's link as the receive service judged it (connected
   * with standing warnings is still connected, its reason said); otherwise what reconcile last set.
   */
  #currentStatus(): Status {
    const link = this.#publishing ? (this.#link?.current() ?? null) : null;
    // None runs while the pipeline is rebuilt or down: not "connected" meanwhile.
    if (!link) return this.#publishing ? { state: 'connecting', message: null, notes: null } : this.#status;
    const state = link.state === 'warning' ? 'connected' : link.state;
    if (link.reason.length === 0) return { state, message: null, notes: null };
    const { text, notes } = said(...link.reason);
    return { state, message: text, notes };
  }

  async view(): Promise<StudioView> {
    const s = this.#opts.settings().studio;
    const credentials = await storedTeamSummary(this.#store).catch(() => null);
    return {
      mode: s.mode,
      url: s.servers.length > 0 ? s.servers.join(', ') : null,
      name: s.name,
      retentionDays: s.retentionDays,
      replicas: s.replicas,
      credentials,
      status: this.#currentStatus(),
      recordings: this.#recordings(),
      members: this.#members(),
    };
  }

  /** The receiver's last reading of every member's lag, furthest behind first. */
  #members(): StudioMemberView[] {
    const publisher = this.#publisher;
    if (!publisher) return [];
    return publisher.membersLag
      .map((lag) => ({
        id: lag.consumer,
        label: lag.label,
        pending: lag.pending,
        oldestAt: lag.oldestAt?.toISOString() ?? null,
        expiresAt: lag.expiresAt?.toISOString() ?? null,
        lagging: publisher.isLagging(lag),
      }))
      .sort((a, b) => (a.expiresAt ?? '\uffff').localeCompare(b.expiresAt ?? '\uffff') || b.pending - a.pending);
  }

  /**
   * What the team holds (the stream's announcements, also those shared before this run) with their state on
   * this computer, and what this computer has that the stream no longer lists; newest first.
   */
  #recordings(): StudioRecordingView[] {
    const rows = new Map<string, StudioRecordingView>();
    const fileNameOf = (p: string | undefined) => (p ? p.split(/[\\/]/).pop()! : null);
    if (this.#follower) {
      for (const r of this.#follower.records()) {
        rows.set(r.identity, {
          identity: r.identity,
          channelId: r.announcement.channelId,
          state: r.state === 'started' ? 'mirroring' : r.state,
          bytes: r.state === 'saved' ? r.announcement.bytes : (this.#progress.get(r.identity) ?? null),
          totalBytes: r.announcement.bytes,
          fileName: fileNameOf(r.path),
          at: r.at,
        });
      }
      for (const a of this.#follower.announcements()) {
        if (rows.has(a.identity)) continue;
        const row = { identity: a.identity, channelId: a.channelId, totalBytes: a.bytes, at: a.savedAt };
        rows.set(a.identity, { ...row, state: 'waiting', bytes: null, fileName: null });
      }
    } else if (this.#publisher) {
      const p = this.#publisher;
      // Waiting here, unless the ledger or the team's list says it is shared (by this or another receiver).
      for (const w of p.waiting()) {
        const row = { identity: w.identity, channelId: w.channelId, totalBytes: w.bytes, at: w.savedAt };
        rows.set(w.identity, { ...row, state: 'waiting', bytes: null, fileName: w.fileName });
      }
      for (const r of p.shared()) {
        if (!r.channelId) continue; // recorded before the ledger kept names: the announcement below has it
        const row = { identity: r.identity, channelId: r.channelId, bytes: r.bytes ?? null, at: r.at };
        rows.set(r.identity, { ...row, state: 'shared', totalBytes: r.bytes ?? null, fileName: r.fileName ?? null });
      }
      for (const a of p.announcements()) {
        const row = { identity: a.identity, channelId: a.channelId, bytes: a.bytes, at: a.savedAt };
        rows.set(a.identity, { ...row, state: 'shared', totalBytes: a.bytes, fileName: a.fileName });
      }
    }
    return [...rows.values()].sort((x, y) => Date.parse(y.at) - Date.parse(x.at)).slice(0, 500);
  }

  /**
   * A member's mirrored recordings as rows of the one Recordings list (same states and actions as a download
   * from the service): waiting is queued here, mirroring is downloading, gone is expired. Empty unless following.
   */
  memberRecordings(): RecordingView[] {
    if (!this.#follower) return [];
    return this.#recordings().map((r) => this.#memberView(r));
  }

  /** The saved file behind a member row's key, or null. */
  savedPath(key: string): string | null {
    if (!this.#follower || !key.startsWith(STUDIO_KEY_PREFIX)) return null;
    const identity = key.slice(STUDIO_KEY_PREFIX.length);
    const record = this.#follower.records().find((r) => r.identity === identity);
    return record?.state === 'saved' ? (record.path ?? null) : null;
  }

  #memberView(r: StudioRecordingView): RecordingView {
    const record = this.#follower?.records().find((m) => m.identity === r.identity);
    const states = { waiting: 'pending', mirroring: 'downloading', saved: 'saved', gone: 'expired' } as const;
    return {
      key: `${STUDIO_KEY_PREFIX}${r.identity}`,
      channelId: r.channelId,
      source: record?.announcement.kind ?? 'server',
      state: r.state === 'shared' ? 'saved' : states[r.state],
      receivedAt: r.at,
      deadline: null,
      bytes: r.bytes,
      totalBytes: r.totalBytes,
      rate: null,
      etaSeconds: null,
      fileName: r.fileName,
      // Gone before this computer could mirror it (expired while away, or from the store mid-transfer): said why.
      error: r.state === 'gone' ? 'It expired from the team server before this computer could mirror it.' : null,
      attempts: 1,
      // A mirrored copy is checked against the team's SHA-256 and size before it is named.
      ...(r.state === 'saved' ? { checks: ['size', 'sha256'] as RecordingView['checks'] } : {}),
      hasThumbnail: false,
    };
  }

  #changed(): void {
    void this.view().then(this.#opts.emit, () => undefined);
    this.#pushLink();
    const push = this.#opts.recordingChanged;
    if (!push) return;
    for (const row of this.memberRecordings()) {
      // Removed from the list: not shown again (the list leaves it out too).
      if (this.#hidden.has(row.key)) continue;
      const text = JSON.stringify(row);
      if (this.#pushed.get(row.key) === text) continue;
      this.#pushed.set(row.key, text);
      push(row);
    }
  }

  /** Pushes the health's studio link when it changed (null while studio mode is off). */
  #pushLink(): void {
    // Judged in studio/ (studio-link.ts); a running publisher's link the receive service judges itself.
    const link = studioLinkOf({
      state: this.#status.state,
      notes: this.#status.notes ?? null,
      warnings: [...this.#warnings.values()],
      heldBack: this.#key === 'held back',
    });
    const text = JSON.stringify(link);
    if (text === this.#pushedLink) return;
    this.#pushedLink = text;
    this.#opts.linkChanged?.(link);
  }

  /** Standing warnings of the publisher or follower, kept until each is cleared (a new one replaces its kind). */
  #watchWarnings(source: {
    on(event: 'warning', listener: (w: { kind: string; message: string; note?: Note }) => void): unknown;
    on(event: 'warningCleared', listener: (kind: string) => void): unknown;
  }): void {
    this.#warnings.clear();
    source.on('warning', (w) => {
      this.#warnings.set(w.kind, w.note ?? errorNote({ message: w.message }));
      this.#changed();
    });
    source.on('warningCleared', (kind) => {
      if (this.#warnings.delete(kind)) this.#changed();
    });
  }

  #setStatus(state: Status['state'], why?: Note): void {
    const { text, notes } = why ? said(why) : { text: null, notes: null };
    this.#status = { state, message: text, notes };
    this.#changed();
  }

  async #set(input: StudioInput): Promise<StudioView> {
    if (input.mode !== 'off' && !input.url) throw new ConfigError(note('studioUrlNeeded'));
    const servers = input.url ? teamServerList(parseTeamUrls(input.url, STUDIO_URL).servers) : [];
    const current = this.#opts.settings().studio;
    const retentionDays = input.retentionDays ?? current.retentionDays;
    const replicas = input.replicas === undefined ? current.replicas : input.replicas;
    await this.#opts.save({ ...current, mode: input.mode, servers, name: input.name, retentionDays, replicas });
    return this.view();
  }

  /** Connects once (no retries) with the stored or environment credentials, and says what happened. */
  async #test(input: string): Promise<{ ok: boolean; message: string; notes: Note[] }> {
    const { url, servers } = parseTeamUrls(input, STUDIO_URL);
    try {
      const credentials = await resolveTeamCredentials(url, this.#opts.env, this.#store).catch(() => null);
      const nc = await connectTeam({ url, servers, credentials, name: 'tally test', maxAttempts: 1 });
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const info = await (await jetstreamManager(nc)).getAccountInfo().finally(() => nc.close());
      // The client needs only one server of a cluster to answer: each is asked on its own, so none that is
      // down hides behind the others.
      const down =
        servers.length < 2
          ? []
          : (
              await Promise.all(
                servers.map((server) =>
                  connectTeam({ url: server, servers: [server], credentials, name: 'tally test', maxAttempts: 1 }).then(
                    async (one) => {
                      await one.close();
                      return null;
                    },
                    () => `${server.protocol}//${server.host}`,
                  ),
                ),
              )
            ).filter((s): s is string => s !== null);
      const said = [note('studioJetStream', { count: info.streams })];
      if (down.length > 0) said.push(note('studioServersDown', { count: down.length, servers: down.join(', ') }));
      return { ok: true, ...answer(...said) };
    } catch (error) {
      return { ok: false, ...answer(teamNote(error)) };
    }
  }
}

function toTeam(input: TeamCredentialsInput) {
  return 'token' in input ? { token: input.token } : { user: input.user, password: input.password };
}

/** What the tray says about a team server error: where to fix it in Settings, not which flag to pass. */
function teamNote(error: unknown): Note {
  if (error instanceof TeamAuthError || error instanceof TeamTlsError) return error.appNote;
  if (error instanceof TeamUnreachableError && error.note) return error.note;
  return errorNote(error instanceof TallyError ? error : { message: describeError(error) });
}

function answer(...why: Note[]): { message: string; notes: Note[] } {
  const { text, notes } = said(...why);
  return { message: text, notes };
}
