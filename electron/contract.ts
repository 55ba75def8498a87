/**
 * The one typed contract between the renderer and the core. The renderer knows only this file, so the
 * same popover runs in Electron (IPC through the preload) and in a browser (WebSocket to `tally serve`).
 *
 * - `RequestMap`: request name -> argument tuple and result. Names are namespaced `area:verb`.
 * - `EventMap`: push events from the core.
 * - `requestSchemas`: zod schemas for every argument tuple, checked on the core side of both transports.
 * - `createBridge`: builds the named-method object (`tally.channels.live()`) over any `invoke`/`subscribe`
 *   pair; the preload and the WebSocket client both use it, so both transports expose the same shape.
 *
 * This file must stay free of Node and Electron imports: it is bundled into the renderer and the preload.
 */
import { z } from 'zod';
import type { Note } from './core/notes.js';
import type { HealthView } from './core/health-view.js';
import type { ChannelJson, TunnelKind, TunnelStatus as CoreTunnelStatus } from './core/view-shapes.js';

// ---------------------------------------------------------------------------------------------------
// Data shapes (JSON: dates are ISO strings)

/** A channel as the core hands it over (core/view-shapes.ts: the same object `tally live --json` prints). */
export type ChannelView = ChannelJson;

export interface SearchQuery {
  /** ISO 8601 start of the period. */
  since: string;
  /** ISO 8601 end of the period. */
  until: string;
  keyword?: string;
}

export interface SearchResultView {
  totalCount: number;
  channels: ChannelView[];
  /** True when the service capped the answer and not every channel could be fetched. */
  truncated: boolean;
}

/**
 * `refused`: a web client upload Tally refused or lost on the way in (the web page was told nothing). `gone`: the
 * service answered that the file is not there (403/404/410) before its deadline; Tally still looks again now and
 * then until the deadline, and "Retry now" looks at once.
 */
export type RecordingState = 'pending' | 'downloading' | 'saved' | 'failed' | 'expired' | 'refused' | 'gone';

export interface RecordingView {
  key: string;
  channelId: string;
  /** 'server' for broadcast recordings from the webhook, 'client' for web SDK uploads. */
  source: 'server' | 'client';
  state: RecordingState;
  receivedAt: string;
  /** When the service deletes the file (server recordings only). */
  deadline: string | null;
  bytes: number | null;
  totalBytes: number | null;
  /** Smoothed bytes per second while downloading. */
  rate: number | null;
  etaSeconds: number | null;
  /** File name (not the full path: the renderer never needs the file system layout). */
  fileName: string | null;
  error: string | null;
  /** `error` as notes the popover translates (see core/notes.ts). */
  errorNotes?: Note[] | null;
  attempts: number;
  /** When the next automatic attempt is due (waiting after an error, or a gone recording's next look). */
  nextAttemptAt?: string | null;
  /**
   * A saved recording: what its download was checked against before it was named (size from the server or the
   * webhook, MD5 from the S3 ETag, or `repeat`: two downloads gave the same bytes while the ETag was not their
   * MD5, as S3 does for encrypted objects; `sha256`: a studio member's copy matched the team's SHA-256). Empty or
   * absent: nothing could be checked, so it is saved but not verified. `short`: shorter than the webhook announced,
   * saved because the server kept sending that much: never shown as verified.
   */
  checks?: ('size' | 'md5' | 'repeat' | 'sha256' | 'short')[];
  /** Client uploads: which of the web SDK's two recordings (its own stream `LL`, the remote one `RR`). */
  track?: 'local' | 'remote' | null;
  /** The webhook named a thumbnail image (fetched through `recordings:thumbnail`). */
  hasThumbnail?: boolean;
}

export interface GapView {
  channelId: string;
  endedAt: string;
  /**
   * True for the live check's findings: the channel closed while Tally was running and its recording webhook
   * never came within the grace period ("recording expected but not received"). Absent for the gap report's
   * channels, which ended while Tally was not running.
   */
  live?: boolean;
}

export interface GapReport {
  /** Start of the checked period (when Tally was last running), or null if never ran before. */
  since: string | null;
  checkedAt: string | null;
  missing: GapView[];
  error: string | null;
  errorNotes?: Note[] | null;
}

export type TunnelProvider = TunnelKind;

/** A tunnel status with nothing open (core/view-shapes.ts), for views and test doubles to start from. */
export { tunnelOff } from './core/view-shapes.js';

/** The supervisor's status (core/view-shapes.ts), with what only the app knows. */
export interface TunnelStatus extends CoreTunnelStatus {
  /** Why the last restart failed, until one succeeds (the previous setup still receives, or nothing does). */
  restartProblem?: { message: string; notes: Note[] } | null;
}

export interface CredentialsStatus {
  configured: boolean;
  serviceId: string | null;
  /** Where the credentials come from. 'sandbox' means demo mode against the embedded sandbox. */
  source: 'env' | 'keychain' | 'sandbox' | null;
  /** False on Linux without a Secret Service: the UI explains instead of storing in clear. */
  keychainAvailable: boolean;
  keychainMessage: string | null;
  keychainNotes?: Note[] | null;
  /** True when an ngrok authtoken is in the keychain, absent otherwise (the token never leaves the core). */
  ngrokTokenStored?: boolean;
  /** Without a keychain: the file, readable by this user only, that holds (or will hold) the ngrok authtoken. */
  ngrokTokenFile?: string;
}

export type Language = 'system' | 'en' | 'ko';

/** Settings as the renderer sees them: never a secret, never a token. */
export interface SettingsView {
  recordingsFolder: string;
  /**
   * Where real recordings go (the saved setting, or the default `tally listen` and `tally follow` use too): the
   * guide offers it even in demo mode, whose own folder is kept apart and is never a real one's default.
   */
  ownRecordingsFolder: string;
  pollIntervalSec: number;
  fileNameTemplate: string;
  concurrency: number;
  notifications: { saved: boolean; failed: boolean; unreachable: boolean; live: boolean };
  launchAtLogin: boolean;
  language: Language;
  tunnel: {
    provider: TunnelProvider;
    publicUrl: string | null;
    ngrokDomain: string | null;
    localtunnelHost: string | null;
  };
  /** The local port the webhook receiver listens on (a reverse proxy for an own URL forwards to it). */
  receiverPort: number;
  autoRegisterWebhook: boolean;
  endpoints: { baseUrl: string | null; consoleApiUrl: string | null; adminUrl: string | null };
  uploadOrigins: string[];
  demoMode: boolean;
  receivingPaused: boolean;
  /** The first-run guide was finished or skipped. */
  firstRunDone: boolean;
  /** How much the log file holds: `debug` adds detail for chasing a bug to the event trail (info). */
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** The tray app's update feed (Settings → Advanced); null: the one the build was published with. */
  updateFeedUrl: string | null;
}

export type StudioMode = 'off' | 'receiver' | 'follow';

/** A studio recording on this computer: mirrored here (follow) or shared from here (receiver). */
export interface StudioRecordingView {
  identity: string;
  channelId: string;
  /**
   * follow: waiting (on the team server, not started here) → mirroring → saved (or gone: expired from the team
   * store first); receiver: waiting (saved here, not in the team store yet) → shared.
   */
  state: 'mirroring' | 'saved' | 'gone' | 'waiting' | 'shared';
  bytes: number | null;
  totalBytes: number | null;
  fileName: string | null;
  at: string;
}

/**
 * How far one studio member is behind, as the receiver reads it from the team server: recordings it has not
 * fetched yet, and when the oldest of them was shared and leaves the team server.
 */
export interface StudioMemberView {
  /** The member's durable place on the team server (stable across renames). */
  id: string;
  /** What the member calls itself (`name on host`). */
  label: string;
  pending: number;
  /** When the oldest pending recording was shared (null: nothing pending). */
  oldestAt: string | null;
  /** When the team server drops it (null: nothing pending). */
  expiresAt: string | null;
  /** The oldest pending recording leaves the team server within a day (the receiver's lag warning). */
  lagging: boolean;
}

/** Studio mode as the renderer sees it: never the team password or token. */
export interface StudioView {
  mode: StudioMode;
  /** The team server, or a cluster's servers separated by commas (the first one the credentials are for). */
  url: string | null;
  name: string | null;
  /** Receiver: how many days the team server keeps recordings (stream, claims and object store). */
  retentionDays: number;
  /** Receiver: how many servers of a cluster keep each stream and store (null: as they are, 1 when new). */
  replicas: 1 | 3 | 5 | null;
  /** Receiver: every member's lag, as last read (empty on a member, or before any member joined). */
  members: StudioMemberView[];
  /** Which server the keychain entry is for and of which kind, or null when none is stored. */
  credentials: { server: string; kind: 'user' | 'token' } | null;
  status: {
    state: 'off' | 'connecting' | 'connected' | 'unreachable' | 'error';
    message: string | null;
    notes?: Note[] | null;
  };
  recordings: StudioRecordingView[];
}

export interface AppInfo {
  version: string;
  platform: string;
  transport: 'ipc' | 'ws';
  demo: boolean;
  /** Whether native pickers / reveal-in-folder exist (Electron) or not (browser). */
  native: boolean;
  /** Whether Open and Show in folder work: the tray app, or a browser on the desktop `tally serve` runs on. */
  fileActions: boolean;
}

/** A result the Settings view shows as it is: `message` in English, `notes` to translate it by code. */
export interface CheckResult {
  ok: boolean;
  message: string | null;
  notes?: Note[] | null;
  /** A folder check: the absolute folder it checked (`~` and relative paths resolved), to show back. */
  path?: string;
}

export interface ErrorView {
  code: string;
  /** In English, for the log and the CLI; the popover translates by `code` with `params`. */
  message: string;
  /** The specifics the message carries (a channel, an endpoint, a status), for a translation to put in place. */
  params?: Record<string, string | number>;
}

// ---------------------------------------------------------------------------------------------------
// Argument schemas (checked on the core side; the renderer is untrusted)

const isoDate = z.iso.datetime({ offset: true });
const channelId = z.string().min(1).max(4096);
const origin = z.string().max(2048);
const httpUrl = z
  .string()
  .max(2048)
  .refine((s) => /^https?:\/\//i.test(s) && URL.canParse(s), 'must be an http(s) URL');

export const SearchQuerySchema = z
  .object({ since: isoDate, until: isoDate, keyword: z.string().max(1024).optional() })
  .strict()
  .refine((q) => Date.parse(q.since) <= Date.parse(q.until), {
    message: 'since must not be after until',
    path: ['since'],
  });

export const SettingsPatchSchema = z
  .object({
    recordingsFolder: z.string().min(1).max(4096),
    pollIntervalSec: z.number().int().min(2).max(3600),
    fileNameTemplate: z.string().min(1).max(256),
    concurrency: z.number().int().min(1).max(10),
    notifications: z
      .object({ saved: z.boolean(), failed: z.boolean(), unreachable: z.boolean(), live: z.boolean() })
      .strict()
      .partial(),
    launchAtLogin: z.boolean(),
    language: z.enum(['system', 'en', 'ko']),
    tunnel: z
      .object({
        provider: z.enum(['none', 'url', 'ngrok', 'localtunnel']),
        publicUrl: httpUrl.nullable(),
        ngrokDomain: z.string().max(253).nullable(),
        localtunnelHost: httpUrl.nullable(),
      })
      .strict()
      .partial(),
    receiverPort: z.number().int().min(1).max(65_535),
    autoRegisterWebhook: z.boolean(),
    endpoints: z
      .object({ baseUrl: httpUrl.nullable(), consoleApiUrl: httpUrl.nullable(), adminUrl: httpUrl.nullable() })
      .strict()
      .partial(),
    uploadOrigins: z.array(origin).max(50),
    demoMode: z.boolean(),
    receivingPaused: z.boolean(),
    firstRunDone: z.boolean(),
    logLevel: z.enum(['debug', 'info', 'warn', 'error']),
    updateFeedUrl: httpUrl.nullable(),
  })
  .strict()
  .partial();

export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

export const CredentialsInputSchema = z
  .object({
    serviceId: z.string().trim().min(1).max(256),
    secret: z.string().min(1).max(4096),
  })
  .strict();

export type CredentialsInput = z.infer<typeof CredentialsInputSchema>;

/** A team server, or a cluster's servers separated by commas; the core parses it (parseTeamUrls). */
const teamUrl = z
  .string()
  .trim()
  .max(4096)
  .regex(
    /^(nats|tls):\/\/[^\s/@,]+(\s*,\s*(nats|tls):\/\/[^\s/@,]+)*$/,
    'must be nats://HOST:PORT or tls://HOST:PORT, several separated by commas',
  );

export const StudioInputSchema = z
  .object({
    mode: z.enum(['off', 'receiver', 'follow']),
    url: teamUrl.nullable(),
    name: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'letters, digits, dots, dashes or underscores')
      .nullable(),
    /** Left out: unchanged. */
    retentionDays: z.number().int().min(1).max(365).optional(),
    /** Receiver: 1, 3 or 5; null keeps what the team server has. Left out: unchanged. */
    replicas: z
      .union([z.literal(1), z.literal(3), z.literal(5)])
      .nullable()
      .optional(),
  })
  .strict();
export type StudioInput = z.infer<typeof StudioInputSchema>;

/** Team server credentials: a user and password, or a token. */
export const TeamCredentialsInputSchema = z.union([
  z.object({ user: z.string().trim().min(1).max(256), password: z.string().min(1).max(4096) }).strict(),
  z.object({ token: z.string().trim().min(1).max(4096) }).strict(),
]);
export type TeamCredentialsInput = z.infer<typeof TeamCredentialsInputSchema>;

const none = z.tuple([]);
const key = z.string().min(1).max(256);

/** An error the page did not catch (window 'error' or 'unhandledrejection'), bounded: the page is not trusted. */
export const RendererErrorSchema = z
  .object({
    kind: z.enum(['error', 'unhandledrejection']),
    message: z.string().max(2000),
    stack: z.string().max(8000).nullable(),
    /** Where it was thrown (`file:line:column`), when the browser says. */
    source: z.string().max(500).nullable(),
  })
  .strict();
export type RendererErrorReport = z.infer<typeof RendererErrorSchema>;

/**
 * zod's `object` accepts any non-array object (a Date, a Map, a class instance over IPC's structured clone)
 * as an empty record; an argument object must be a plain record.
 */
function plainRecord<S extends z.ZodType>(schema: S) {
  return z
    .custom<unknown>((value) => {
      if (typeof value !== 'object' || value === null) return false;
      const proto: unknown = Object.getPrototypeOf(value);
      return proto === Object.prototype || proto === null;
    }, 'expected a plain object')
    .pipe(schema);
}

/** Every request: its argument tuple schema. The result types are in `RequestMap`. */
export const requestSchemas = {
  'app:info': none,
  'app:diagnostics': none,
  'app:rendererError': z.tuple([plainRecord(RendererErrorSchema)]),
  'channels:live': none,
  'channels:search': z.tuple([plainRecord(SearchQuerySchema)]),
  'channels:end': z.tuple([channelId]),
  'recordings:list': none,
  'recordings:retry': z.tuple([key]),
  'recordings:reveal': z.tuple([key]),
  'recordings:open': z.tuple([key]),
  'recordings:path': z.tuple([key]),
  'recordings:thumbnail': z.tuple([key]),
  'recordings:remove': z.tuple([key]),
  'recordings:gaps': none,
  'settings:get': none,
  'settings:checkFolder': z.tuple([z.string().trim().min(1).max(4096)]),
  'settings:update': z.tuple([plainRecord(SettingsPatchSchema)]),
  'settings:chooseFolder': none,
  'credentials:status': none,
  'credentials:set': z.tuple([plainRecord(CredentialsInputSchema)]),
  'credentials:clear': none,
  'credentials:setNgrokToken': z.tuple([z.string().trim().min(1).max(512)]),
  'credentials:clearNgrokToken': none,
  'credentials:test': z.tuple([plainRecord(CredentialsInputSchema).optional()]),
  'tunnel:status': none,
  'webhook:register': none,
  'clipboard:write': z.tuple([z.string().max(65536)]),
  'studio:get': none,
  'studio:set': z.tuple([plainRecord(StudioInputSchema)]),
  'studio:setCredentials': z.tuple([z.string().trim().max(2048), plainRecord(TeamCredentialsInputSchema)]),
  'studio:clearCredentials': none,
  'studio:test': z.tuple([teamUrl]),
  'health:get': none,
} as const satisfies Record<string, z.ZodType<readonly unknown[]>>;

export type RequestName = keyof typeof requestSchemas;

export interface RequestMap {
  'app:info': { args: []; result: AppInfo };
  /** One redacted text for a bug report (Settings → Advanced → Copy diagnostics; `tally doctor` prints the same). */
  'app:diagnostics': { args: []; result: { text: string } };
  /** An error the popover's page did not catch, for the log's event trail (the page itself carries on). */
  'app:rendererError': { args: [report: RendererErrorReport]; result: { logged: boolean } };
  'channels:live': { args: []; result: ChannelView[] };
  'channels:search': { args: [query: SearchQuery]; result: SearchResultView };
  'channels:end': { args: [channelId: string]; result: { ended: true } };
  'recordings:list': { args: []; result: RecordingView[] };
  'recordings:retry': { args: [key: string]; result: RecordingView };
  'recordings:reveal': { args: [key: string]; result: { ok: boolean } };
  'recordings:open': { args: [key: string]; result: { ok: boolean } };
  /** Full path of a saved recording (for "Copy path"); null while it has no file. */
  'recordings:path': { args: [key: string]; result: { path: string | null } };
  /** The webhook's thumbnail as a `data:` URL (fetched by the core under the download policy), or null. */
  'recordings:thumbnail': { args: [key: string]; result: { dataUrl: string | null } };
  /** Hides a finished recording from the list; its file is left alone. */
  'recordings:remove': { args: [key: string]; result: { ok: boolean } };
  'recordings:gaps': { args: []; result: GapReport };
  'settings:get': { args: []; result: SettingsView };
  /** Whether Tally can save recordings in this folder (created if missing); `message` says why not. */
  'settings:checkFolder': { args: [path: string]; result: CheckResult };
  'settings:update': { args: [patch: SettingsPatch]; result: SettingsView };
  'settings:chooseFolder': { args: []; result: SettingsView | null };
  'credentials:status': { args: []; result: CredentialsStatus };
  'credentials:set': { args: [credentials: CredentialsInput]; result: CredentialsStatus };
  'credentials:clear': { args: []; result: CredentialsStatus };
  /** Stores the ngrok authtoken in the keychain (never in settings, never sent back). */
  'credentials:setNgrokToken': { args: [token: string]; result: CredentialsStatus };
  'credentials:clearNgrokToken': { args: []; result: CredentialsStatus };
  'credentials:test': { args: [credentials?: CredentialsInput]; result: CheckResult & { message: string } };
  'tunnel:status': { args: []; result: TunnelStatus };
  'webhook:register': { args: []; result: TunnelStatus };
  'clipboard:write': { args: [text: string]; result: { ok: boolean } };
  'studio:get': { args: []; result: StudioView };
  'studio:set': { args: [input: StudioInput]; result: StudioView };
  'studio:setCredentials': { args: [url: string, credentials: TeamCredentialsInput]; result: StudioView };
  'studio:clearCredentials': { args: []; result: StudioView };
  'studio:test': { args: [url: string]; result: CheckResult & { message: string } };
  /** Whatever can cost a recording, judged (see core/health-view.ts). */
  'health:get': { args: []; result: HealthView };
}

// Compile-time check that the schema map and the type map name the same requests.
type _SameKeys = [RequestName] extends [keyof RequestMap]
  ? [keyof RequestMap] extends [RequestName]
    ? true
    : never
  : never;
const _sameKeys: _SameKeys = true;
void _sameKeys;

export const REQUEST_NAMES = Object.keys(requestSchemas) as RequestName[];

export interface EventMap {
  /** The live list changed (pushed on every poll while someone is subscribed). */
  'channels:live': ChannelView[];
  /** A recording was added or changed state. */
  'recordings:changed': RecordingView;
  /** Throttled download progress (at most a few per second per recording). */
  'recordings:progress': RecordingView;
  'recordings:gaps': GapReport;
  'tunnel:status': TunnelStatus;
  'settings:changed': SettingsView;
  'credentials:changed': CredentialsStatus;
  /** A background error worth showing (e.g. the live poll failed). */
  'app:error': ErrorView;
  'studio:changed': StudioView;
  /** The health changed (a component's state or reason). */
  'health:changed': HealthView;
}

export type EventName = keyof EventMap;

export const EVENT_NAMES: readonly EventName[] = [
  'channels:live',
  'recordings:changed',
  'recordings:progress',
  'recordings:gaps',
  'tunnel:status',
  'settings:changed',
  'credentials:changed',
  'app:error',
  'studio:changed',
  'health:changed',
];

// ---------------------------------------------------------------------------------------------------
// Transport-independent bridge

/** What a transport provides: a request/response call and an event subscription. */
export interface Transport {
  invoke(name: RequestName, args: readonly unknown[]): Promise<unknown>;
  subscribe(event: EventName, listener: (payload: unknown) => void): () => void;
}

type Split<S extends string> = S extends `${infer A}:${infer B}` ? [A, B] : never;
type Areas = Split<RequestName>[0];
type VerbsOf<A extends string> = { [K in RequestName]: Split<K>[0] extends A ? Split<K>[1] : never }[RequestName];
type RequestFor<A extends string, V extends string> = `${A}:${V}` & RequestName;

/** `tally.channels.live()`, `tally.settings.update(patch)`, ... plus `tally.on(event, listener)`. */
export type TallyBridge = {
  [A in Areas]: {
    [V in VerbsOf<A>]: (
      ...args: RequestMap[RequestFor<A, V>]['args']
    ) => Promise<RequestMap[RequestFor<A, V>]['result']>;
  };
} & {
  /** Subscribes to a push event; returns the unsubscribe function. */
  on<E extends EventName>(event: E, listener: (payload: EventMap[E]) => void): () => void;
};

/** Builds the named-method bridge over a transport. Used by the preload and the WebSocket client alike. */
export function createBridge(transport: Transport): TallyBridge {
  const bridge: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {};
  for (const name of REQUEST_NAMES) {
    const [area, verb] = name.split(':') as [string, string];
    (bridge[area] ??= {})[verb] = (...args: unknown[]) => transport.invoke(name, args);
  }
  const on = (event: EventName, listener: (payload: unknown) => void) => {
    if (!EVENT_NAMES.includes(event)) throw new Error(`Unknown event "${String(event)}"`);
    return transport.subscribe(event, listener);
  };
  return Object.freeze({ ...bridge, on }) as unknown as TallyBridge;
}

export { errorNote, nested, note, NOTE_TEXT, notesText, noteText, said } from './core/notes.js';
export { NoteSchema } from './core/note-schema.js';
export type { Note, NoteCode, NoteParams, PluralText } from './core/notes.js';
export { koNotes } from './core/notes-ko.js';
export { notesTextIn, SHELL_TEXT, shellLanguage, shellText } from './shell-text.js';
export type { ShellLanguage, ShellText, ShellTextKey, ShellTexts } from './shell-text.js';
export {
  HEALTH_COMPONENTS,
  PROBLEMS_LISTED,
  problemRecordingText,
  recordingNeedsAttention,
  worseHealth,
} from './core/health-view.js';
// The one retry policy and loop: the browser reconnects its WebSocket with the core's.
export { backoffDelay, type BackoffPolicy } from './core/backoff.js';
export { RetryLoop } from './core/retry-loop.js';
export type {
  HealthComponentId,
  HealthComponentView,
  HealthState,
  HealthView,
  ProblemRecordingView,
  ReceiverAddressView,
} from './core/health-view.js';
export { codedMessage, errorCodeOf, errorMessageOf, errorParamsOf, RemoteError } from './contract-errors.js';

/** Handler map the core implements once for both transports. */
export type RequestHandlers = {
  [K in RequestName]: (...args: RequestMap[K]['args']) => Promise<RequestMap[K]['result']>;
};

/**
 * How the `tally serve` page proves itself at the WebSocket handshake (core/app/ui-server.ts): in
 * `Sec-WebSocket-Protocol`, never in a URL (URLs end up in logs and history) nor in a cookie (cookies ignore
 * ports, so another server on loopback would get it). The page offers `tally.v1` (what the server selects)
 * and either `tally.code.<one-time code>` from its link or `tally.key.<session key>` from sessionStorage.
 */
export const UI_PROTOCOL = 'tally.v1';
export function uiProtocols(credential: { code: string } | { key: string }): string[] {
  return [UI_PROTOCOL, 'code' in credential ? `tally.code.${credential.code}` : `tally.key.${credential.key}`];
}
