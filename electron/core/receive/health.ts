/**
 * The health model: whatever can cost a recording, judged ok / warning / error with a one-line reason and the
 * action to take, for every face alike (tray icon, popover header, `tally status`, NDJSON `health` lines).
 *
 * `judgeHealth` is pure: it reads one snapshot of facts (`HealthFacts`) that the receive service gathers from
 * the running pipeline, the tunnel supervisor's public-path check, the registrar, the journal, the disks, the
 * keychain and the studio link. The overall state is the worst component's; nothing is ever "ok" while a
 * webhook could not reach Tally or a recording waits on an error.
 */
import {
  HEALTH_COMPONENTS,
  PROBLEMS_LISTED,
  recordingNeedsAttention,
  worseHealth,
  type HealthComponentId,
  type HealthComponentView,
  type HealthState,
  type HealthView,
  type ProblemRecordingView,
} from '../health-view.js';
import { nested, note, notesText, type Note, type NoteCode } from '../notes.js';
import type { TunnelStatus } from '../tunnels/types.js';
import { formatBytes } from '../download/errors.js';
import type { RecordingJob } from '../recordings/types.js';
import type { PortHolder } from './port-holder.js';

/** Which face reads the actions: the popover names Settings fields, the command line names flags. */
export type HealthFace = 'app' | 'cli';

/** Free space below this is an error: a download or the journal's next write may fail now. */
export const DISK_ERROR_BYTES = 256 * 1024 * 1024;
/** Free space below this (or below what the unfinished downloads still need) is a warning. */
export const DISK_WARNING_BYTES = 2 * 1024 * 1024 * 1024;
/** A download without a byte for this long counts as stalled. */
export const STALLED_MS = 2 * 60 * 1000;
/** Failed, expired and gone recordings count for this long (or until removed from the list). */
export const ATTENTION_MS = 24 * 60 * 60 * 1000;
/** A failing download this close to its deadline turns the downloads red. */
export const URGENT_MS = 60 * 60 * 1000;

export interface DiskFacts {
  path: string;
  freeBytes: number | null;
  /** Why the free space could not be read. */
  error: string | null;
  /** Something other than a folder (a file) stands where the folder should be: nothing can be saved there. */
  notFolder?: boolean;
}

export interface HealthFacts {
  face: HealthFace;
  now: number;
  /** Demo mode: the embedded sandbox plays the service and calls the receiver directly. */
  demo: boolean;
  /** A studio member: its recordings come from the studio, it receives no webhooks of its own. */
  member: boolean;
  receiver: {
    host: string;
    configuredPort: number;
    portFollows: boolean;
    /** null before the pipeline started (or when none runs: see `down`). */
    listening: boolean | null;
    port: number | null;
    holder: PortHolder | null;
    /** Nothing receives: why (the app's failed reconcile). */
    down: Note[] | null;
    /** New webhooks are refused with 503: why (English, and as a note to translate when the receiver gave one). */
    refusing: string | null;
    refusingNote?: Note | null;
  };
  tunnel: TunnelStatus | null;
  registration: {
    /** Whether Tally registers the URL itself (`--register`, the auto-register setting). */
    enabled: boolean;
    registeredUrl: string | null;
    failed: string | null;
  };
  downloads: {
    paused: boolean;
    /** Jobs that are not saved: waiting, downloading, and those that ended badly within ATTENTION_MS. */
    jobs: readonly (Pick<RecordingJob, 'key' | 'state' | 'error' | 'deadline' | 'updatedAt' | 'channelId'> &
      Partial<Pick<RecordingJob, 'checks' | 'bytes' | 'announcedBytes'>> & {
        /** When the download queue tries it again on its own (ISO), when it knows. */
        nextAttemptAt?: string | null;
      })[];
    /** Last byte received per downloading key (ms). */
    lastProgressAt: ReadonlyMap<string, number>;
    /** Client recordings refused within ATTENTION_MS and not removed from the list. */
    refusedUploads: number;
    /** Closed channels whose recording never came, within ATTENTION_MS. */
    missing: number;
    /** Bytes the unfinished downloads still need (announced sizes). */
    neededBytes: number;
  };
  disks: DiskFacts[];
  /** Recordings waiting for space in the recordings folder (the download queue's disk budget), when any. */
  diskWait: {
    folder: string;
    waiting: number;
    neededBytes: number | null;
    freeBytes: number | null;
    /** The last web client upload refused for space, while there is still no room for it. */
    uploadsRefused?: { neededBytes: number; freeBytes: number } | null;
  } | null;
  /** Only where the keychain is used (the app): null leaves the component out. */
  keychain: { available: boolean; reason: Note[] } | null;
  /** Only in studio mode: null leaves the component out. */
  studio: {
    /** `warning`: connected, with a standing warning (a namesake, a full folder, a member lagging toward retention). */
    state: 'connecting' | 'connected' | 'warning' | 'unreachable' | 'error' | 'off';
    reason: Note[];
  } | null;
}

/**
 * The view over judged components: the worst state decides, its reason is the summary (or "all is well"), and the
 * components come in the order a webhook meets them (HEALTH_COMPONENTS).
 */
function healthOf(
  judged: readonly (HealthComponentView | null)[],
  rest: Pick<HealthView, 'receiver' | 'problems' | 'problemRecordings' | 'moreProblems'> & {
    now: number;
    member: boolean;
  },
): HealthView {
  const parts = judged
    .filter((c): c is HealthComponentView => c !== null)
    .sort((a, b) => HEALTH_COMPONENTS.indexOf(a.id) - HEALTH_COMPONENTS.indexOf(b.id));
  let state: HealthState = 'ok';
  for (const part of parts) state = worseHealth(state, part.state);
  const worst = parts.find((p) => p.state === state && state !== 'ok');
  // A studio member receives no webhooks: its "all is well" is about the mirror.
  const summaryNotes = worst ? worst.reasonNotes : [note(rest.member ? 'healthMemberAllOk' : 'healthAllOk')];
  return {
    state,
    summary: notesText(summaryNotes),
    summaryNotes,
    components: parts,
    receiver: rest.receiver,
    ...(rest.member ? { member: true as const } : {}),
    problems: rest.problems,
    ...(rest.problemRecordings
      ? { problemRecordings: rest.problemRecordings, moreProblems: rest.moreProblems ?? 0 }
      : {}),
    checkedAt: new Date(rest.now).toISOString(),
  };
}

function component(
  id: HealthComponentId,
  state: HealthState,
  reason: Note[],
  action: Note[] | null = null,
): HealthComponentView {
  return {
    id,
    state,
    reason: notesText(reason),
    reasonNotes: reason,
    action: action ? notesText(action) : null,
    actionNotes: action,
  };
}

/** `code`'s sentence with the notes as its `{reason}` (one nested note translates; several stay English). */
function because(code: NoteCode, notes: Note[] | null | undefined, fallback: string): Note {
  const inner = notes && notes.length > 0 ? notes : [note('error', { message: fallback })];
  if (inner.length === 1) return note(code, nested('reason', inner[0]!));
  return note(code, { reason: notesText(inner) });
}

function receiverHealth(f: HealthFacts): HealthComponentView {
  const r = f.receiver;
  if (r.down) return component('receiver', 'error', [because('healthReceiverDown', r.down, 'not running')]);
  if (r.listening === false) {
    const said = r.holder?.tally
      ? note('healthPortHeldByTally', { port: r.configuredPort, face: r.holder.tally, pid: r.holder.pid })
      : r.holder
        ? note('healthPortHeldBy', { port: r.configuredPort, program: r.holder.program, pid: r.holder.pid })
        : note('healthPortHeld', { port: r.configuredPort });
    // Another Tally is no "program" to a producer: it is quit the way Tally is.
    const code = r.holder?.tally
      ? f.face === 'app'
        ? 'healthPortActionTallyApp'
        : 'healthPortActionTallyCli'
      : f.face === 'app'
        ? 'healthPortActionApp'
        : 'healthPortActionCli';
    const action = note(code, { port: r.configuredPort });
    return component('receiver', 'error', [said], [action]);
  }
  if (r.listening === null || r.port === null)
    return component('receiver', 'warning', [note('healthReceiverStarting')]);
  if (r.refusing) {
    return component(
      'receiver',
      'error',
      [note('healthRefusing', r.refusingNote ? nested('reason', r.refusingNote) : { reason: r.refusing })],
      [note('healthRefusingAction')],
    );
  }
  if (r.configuredPort !== 0 && r.port !== r.configuredPort) {
    const provider = f.demo ? 'sandbox' : (f.tunnel?.provider ?? 'tunnel');
    return component('receiver', 'ok', [
      note('healthReceiverMoved', { host: r.host, port: r.port, configured: r.configuredPort, provider }),
    ]);
  }
  return component('receiver', 'ok', [note('healthReceiverOk', { host: r.host, port: r.port })]);
}

function publicPathHealth(f: HealthFacts): HealthComponentView {
  // While the receiver starts the path is not known yet; while it cannot listen, nothing arrives.
  if (f.receiver.listening === null) return component('publicPath', 'warning', [note('healthPublicWaiting')]);
  if (!f.receiver.listening) return component('publicPath', 'error', [note('healthPublicWaiting')]);
  const t = f.tunnel;
  // The demo sandbox calls the local URL itself; a tunnel configured beside it is still checked.
  if (f.demo && (!t || t.provider === 'none')) return component('publicPath', 'ok', [note('healthPublicDemo')]);
  if (!t || (t.state === 'off' && t.provider === 'none')) {
    const action = note(f.face === 'app' ? 'healthPublicNoneActionApp' : 'healthPublicNoneActionCli');
    return component('publicPath', 'warning', [note('healthPublicNone')], [action]);
  }
  if (t.state === 'reachable') return component('publicPath', 'ok', [note('healthPublicOk')]);
  if (t.state === 'connecting') return component('publicPath', 'warning', [note('healthPublicChecking')]);
  const where = { host: f.receiver.host, port: f.receiver.port ?? f.receiver.configuredPort };
  return component(
    'publicPath',
    'error',
    [because('healthPublicDown', t.messageNotes, t.message ?? 'no answer')],
    [note('healthPublicDownAction', where)],
  );
}

function registrationHealth(f: HealthFacts, publicOk: boolean): HealthComponentView {
  if (f.demo) return component('registration', 'ok', [note('healthRegistrationDemo')]);
  if (f.member) return component('registration', 'ok', [note('healthRegistrationMember')]);
  const reg = f.registration;
  const url = f.tunnel?.publicUrl ?? null;
  if (reg.failed) return component('registration', 'error', [note('healthRegisterFailed', { reason: reg.failed })]);
  if (!url) return component('registration', 'warning', [note('healthRegisterWaiting')]);
  if (f.tunnel?.registered || reg.registeredUrl === url) {
    return publicOk
      ? component('registration', 'ok', [note('healthRegisteredOk')])
      : component('registration', 'error', [note('healthRegisteredBroken')]);
  }
  const action = note(f.face === 'app' ? 'healthNotRegisteredActionApp' : 'healthNotRegisteredActionCli');
  return component('registration', 'warning', [note('healthNotRegistered')], [action]);
}

/** Recordings counted under Problems: see `recordingNeedsAttention`, plus refused uploads and missed recordings. */
export function countProblems(f: HealthFacts): number {
  let count = f.downloads.refusedUploads + f.downloads.missing;
  for (const job of f.downloads.jobs) if (recordingNeedsAttention(job)) count++;
  return count;
}

/**
 * The recordings counted under Problems, named: first those Tally still tries (soonest deadline first: they can
 * still be saved), then those it gave up (newest first); PROBLEMS_LISTED of them, the rest counted.
 */
export function problemRecordings(f: HealthFacts): { listed: ProblemRecordingView[]; more: number } {
  const jobs = f.downloads.jobs.filter((job) => recordingNeedsAttention(job));
  const trying = (state: string): boolean => state === 'pending' || state === 'downloading';
  jobs.sort((a, b) =>
    trying(a.state) !== trying(b.state)
      ? trying(a.state)
        ? -1
        : 1
      : trying(a.state)
        ? Date.parse(a.deadline) - Date.parse(b.deadline)
        : Date.parse(b.updatedAt) - Date.parse(a.updatedAt),
  );
  const listed = jobs.slice(0, PROBLEMS_LISTED).map((job) => ({
    channelId: job.channelId,
    key: job.key,
    state: job.state,
    reason: job.error,
    nextAttemptAt: trying(job.state) || job.state === 'gone' ? (job.nextAttemptAt ?? null) : null,
  }));
  return { listed, more: countProblems(f) - listed.length };
}

function downloadsHealth(f: HealthFacts): HealthComponentView {
  const d = f.downloads;
  const action = [note(f.face === 'app' ? 'healthDownloadsActionApp' : 'healthDownloadsActionCli')];
  let lost = d.refusedUploads + d.missing;
  let failing = 0;
  let urgent = 0;
  let stalled = 0;
  let firstReason: string | null = null;
  // Saved shorter than the webhook announced (issue 31): the first one is named.
  let short = 0;
  let firstShort: (typeof d.jobs)[number] | null = null;
  for (const job of d.jobs) {
    if (job.state === 'saved') {
      if (job.checks?.includes('short')) {
        short++;
        firstShort ??= job;
      }
    } else if (job.state === 'failed' || job.state === 'expired' || job.state === 'gone') {
      lost++;
    } else if (job.state === 'downloading' && job.error === null) {
      const since = Math.max(d.lastProgressAt.get(job.key) ?? 0, Date.parse(job.updatedAt));
      if (f.now - since > STALLED_MS) stalled++;
    } else if (job.error !== null) {
      failing++;
      firstReason ??= job.error;
      // Past its deadline only the origin knows whether the file is still there (Tally keeps trying): failing,
      // not "expires within the hour" (a restart after a clock step may hold a deadline that is far off).
      const left = Date.parse(job.deadline) - f.now;
      if (left >= 0 && left < URGENT_MS) urgent++;
    }
  }
  if (urgent > 0) {
    const reason = firstReason ?? '';
    return component('downloads', 'error', [note('healthDownloadsUrgent', { count: urgent, reason })], action);
  }
  if (lost > 0) return component('downloads', 'error', [note('healthDownloadsLost', { count: lost })], action);
  if (failing > 0) {
    const reason = firstReason ?? '';
    return component('downloads', 'warning', [note('healthDownloadsFailing', { count: failing, reason })], action);
  }
  if (firstShort) {
    const { channelId: channel, bytes, announcedBytes } = firstShort;
    const said = note('healthDownloadsShort', {
      count: short,
      channel,
      actual: bytes ?? 0,
      expected: announcedBytes ?? 0,
    });
    return component('downloads', 'warning', [said], [note('healthDownloadsShortAction')]);
  }
  if (stalled > 0) {
    const minutes = Math.round(STALLED_MS / 60_000);
    return component('downloads', 'warning', [note('healthDownloadsStalled', { count: stalled, minutes })], action);
  }
  if (d.paused)
    return component('downloads', 'warning', [note('healthDownloadsPaused')], [note('healthDownloadsPausedAction')]);
  return component('downloads', 'ok', [note('healthDownloadsOk')]);
}

function diskHealth(f: HealthFacts): HealthComponentView | null {
  const wait = f.diskWait;
  if (wait && wait.waiting > 0) {
    // Downloads already wait for space: recordings are at risk until some is freed.
    const said = note('healthDiskWaiting', {
      count: wait.waiting,
      path: wait.folder,
      needed: wait.neededBytes === null ? '?' : formatBytes(wait.neededBytes),
      free: wait.freeBytes === null ? '?' : formatBytes(wait.freeBytes),
    });
    return component('disk', 'error', [said], [note('healthDiskAction')]);
  }
  if (wait?.uploadsRefused) {
    // The web SDK never resends: every upload refused now is a client recording lost.
    const said = note('healthUploadsNoRoom', {
      path: wait.folder,
      needed: formatBytes(wait.uploadsRefused.neededBytes),
      free: formatBytes(wait.uploadsRefused.freeBytes),
    });
    return component('disk', 'error', [said], [note('healthDiskAction')]);
  }
  if (f.disks.length === 0) return null;
  let worst: HealthComponentView | null = null;
  for (const disk of f.disks) {
    let view: HealthComponentView;
    if (disk.notFolder) {
      // Every recording would fail here, however much space the disk has: an error, never "… free".
      view = component(
        'disk',
        'error',
        [note('healthDiskNotFolder', { path: disk.path })],
        [note(f.face === 'app' ? 'healthDiskNotFolderActionApp' : 'healthDiskNotFolderActionCli')],
      );
    } else if (disk.freeBytes === null) {
      view = component('disk', 'warning', [
        note('healthDiskUnknown', { path: disk.path, detail: disk.error ?? 'unknown' }),
      ]);
    } else {
      const free = formatBytes(disk.freeBytes);
      if (disk.freeBytes < DISK_ERROR_BYTES) {
        view = component(
          'disk',
          'error',
          [note('healthDiskFull', { path: disk.path, free })],
          [note('healthDiskAction')],
        );
      } else if (disk.freeBytes < Math.max(DISK_WARNING_BYTES, f.downloads.neededBytes)) {
        view = component(
          'disk',
          'warning',
          [note('healthDiskLow', { path: disk.path, free })],
          [note('healthDiskAction')],
        );
      } else {
        view = component('disk', 'ok', [note('healthDiskOk', { free })]);
      }
    }
    if (!worst || worseHealth(worst.state, view.state) !== worst.state) worst = view;
  }
  return worst;
}

function keychainHealth(f: HealthFacts): HealthComponentView | null {
  if (!f.keychain) return null;
  if (f.keychain.available) return component('keychain', 'ok', [note('healthKeychainOk')]);
  return component('keychain', 'warning', [because('healthKeychainMissing', f.keychain.reason, 'not available')]);
}

function studioHealth(f: HealthFacts): HealthComponentView | null {
  const s = f.studio;
  if (!s || s.state === 'off') return null;
  if (s.state === 'connected') return component('studio', 'ok', [note('healthStudioOk')]);
  if (s.state === 'connecting') return component('studio', 'warning', [note('healthStudioConnecting')]);
  const state = s.state === 'error' ? 'error' : 'warning';
  // A member shares nothing: what it says is about its mirror, not the receiver's "saved here and shared".
  const action = s.state === 'warning' ? null : [note(f.member ? 'healthMemberStudioAction' : 'healthStudioAction')];
  return component('studio', state, [because('healthStudioDown', s.reason, s.state)], action);
}

/** Judges one snapshot of facts. */
export function judgeHealth(f: HealthFacts): HealthView {
  const receiver = receiverHealth(f);
  const publicPath = publicPathHealth(f);
  const named = problemRecordings(f);
  const member = f.member;
  const parts = [
    // A studio member receives nothing from the service: no port of its own and no public path is judged (a port
    // another program holds costs a member nothing; issue 31).
    member ? null : receiver,
    member ? null : publicPath,
    registrationHealth(f, publicPath.state === 'ok'),
    downloadsHealth(f),
    diskHealth(f),
    keychainHealth(f),
    studioHealth(f),
  ];
  return healthOf(parts, {
    now: f.now,
    member: f.member,
    receiver: {
      host: f.receiver.host,
      port: f.receiver.listening ? f.receiver.port : null,
      configuredPort: f.receiver.configuredPort,
      portFollows: f.receiver.portFollows,
    },
    problems: countProblems(f),
    problemRecordings: named.listed,
    moreProblems: named.more,
  });
}

/** What a studio member (`tally follow`) knows: its link to the team server, its mirror's failures, its disk. */
export interface MemberFacts {
  now: number;
  studio: NonNullable<HealthFacts['studio']>;
  /** Mirrors that failed and will be tried again: their reasons. */
  failing: readonly string[];
  /** The same mirrors named (channel, identity, reason), for the health's `problemRecordings`. */
  failingNamed?: readonly ProblemRecordingView[];
  /** Mirrors that failed for good (the recording left the team store first) within ATTENTION_MS. */
  lost: number;
  /**
   * Recordings shared while this member was away that expired before it could mirror them, learned within
   * ATTENTION_MS and not yet acknowledged (removed from the list).
   */
  missed?: number;
  disks: DiskFacts[];
}

/** The health of a studio member: no receiver of its own, so the studio link, the mirror and the disk. */
export function judgeMemberHealth(m: MemberFacts): HealthView {
  const action = [note('healthDownloadsActionApp')];
  const missed = m.missed ?? 0;
  const downloads =
    m.lost > 0
      ? component('downloads', 'error', [note('healthDownloadsLost', { count: m.lost })], action)
      : missed > 0
        ? component(
            'downloads',
            'warning',
            [note('healthMemberMissed', { count: missed })],
            [note('healthMemberMissedAction')],
          )
        : m.failing.length > 0
          ? component(
              'downloads',
              'warning',
              [note('healthDownloadsFailing', { count: m.failing.length, reason: m.failing[0] ?? '' })],
              null,
            )
          : component('downloads', 'ok', [note('healthDownloadsOk')]);
  const facts: HealthFacts = {
    face: 'cli',
    now: m.now,
    demo: false,
    member: true,
    receiver: {
      host: '',
      configuredPort: 0,
      portFollows: false,
      listening: null,
      port: null,
      holder: null,
      down: null,
      refusing: null,
    },
    tunnel: null,
    registration: { enabled: false, registeredUrl: null, failed: null },
    downloads: { paused: false, jobs: [], lastProgressAt: new Map(), refusedUploads: 0, missing: 0, neededBytes: 0 },
    disks: m.disks,
    diskWait: null,
    keychain: null,
    studio: m.studio.state === 'off' ? { ...m.studio, state: 'connecting' } : m.studio,
  };
  const problems = m.lost + missed + m.failing.length;
  const listed = (m.failingNamed ?? []).slice(0, PROBLEMS_LISTED);
  return healthOf([studioHealth(facts), downloads, diskHealth(facts)], {
    now: m.now,
    member: true,
    receiver: { host: '', port: null, configuredPort: 0, portFollows: false },
    problems,
    ...(m.failingNamed ? { problemRecordings: listed, moreProblems: problems - listed.length } : {}),
  });
}
