/**
 * Test double: an in-memory twin of the core behind a real `createBridge`, for component specs. Requests
 * answer from scripted handlers (stateful defaults for settings and credentials), every call is recorded,
 * and `emit` pushes events as the core would. Arguments and results are structured-cloned like IPC does,
 * so passing a Svelte state proxy across the bridge fails here as it would in Electron.
 */
import {
  RemoteError,
  createBridge,
  tunnelOff,
  type AppInfo,
  type ChannelView,
  type CredentialsStatus,
  type EventMap,
  type EventName,
  type GapReport,
  type HealthView,
  type RecordingView,
  type RequestMap,
  type RequestName,
  type SettingsPatch,
  type SettingsView,
  type StudioView,
  type TallyBridge,
  type Transport,
  type TunnelStatus,
} from '../../electron/contract.js';
import type { Clock } from '../src/lib/clock.js';

type Result<K extends RequestName> = RequestMap[K]['result'];
export type Handler<K extends RequestName> = (...args: RequestMap[K]['args']) => Result<K> | Promise<Result<K>>;
export type Handlers = { [K in RequestName]: Handler<K> };

export interface RecordedCall {
  name: RequestName;
  args: unknown[];
}

/** A promise with its resolve/reject exposed, to hold a request pending and finish it on cue. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

// ---------------------------------------------------------------------------------------------------
// Fixtures

export function channel(partial: Partial<ChannelView> & { id: string }): ChannelView {
  return {
    serviceId: 'svc',
    state: 'live',
    createdAt: '2024-05-14T10:00:00.000Z',
    endedAt: null,
    durationSeconds: null,
    watchers: 0,
    cumulativeSessions: null,
    ...partial,
  };
}

export function recording(partial: Partial<RecordingView> & { key: string }): RecordingView {
  return {
    channelId: partial.key,
    source: 'server',
    state: 'pending',
    receivedAt: '2024-05-14T10:00:00.000Z',
    deadline: '2024-05-14T16:00:00.000Z',
    bytes: null,
    totalBytes: null,
    rate: null,
    etaSeconds: null,
    fileName: null,
    error: null,
    attempts: 0,
    ...partial,
  };
}

export function appInfo(partial: Partial<AppInfo> = {}): AppInfo {
  return {
    version: '0.1.0',
    platform: 'linux',
    transport: 'ipc',
    demo: false,
    native: true,
    fileActions: true,
    ...partial,
  };
}

export function settingsView(partial: Partial<SettingsView> = {}): SettingsView {
  return {
    firstRunDone: true,
    logLevel: 'info',
    recordingsFolder: '/home/me/Tally Recordings',
    ownRecordingsFolder: '/home/me/Tally Recordings',
    pollIntervalSec: 5,
    fileNameTemplate: '{channelId}',
    concurrency: 2,
    notifications: { saved: true, failed: true, unreachable: true, live: false },
    launchAtLogin: false,
    language: 'en',
    tunnel: { provider: 'none', publicUrl: null, ngrokDomain: null, localtunnelHost: null },
    receiverPort: 8787,
    autoRegisterWebhook: false,
    endpoints: { baseUrl: null, consoleApiUrl: null, adminUrl: null },
    uploadOrigins: [],
    demoMode: false,
    receivingPaused: false,
    updateFeedUrl: null,
    ...partial,
  };
}

export function credentialsStatus(partial: Partial<CredentialsStatus> = {}): CredentialsStatus {
  return {
    configured: false,
    serviceId: null,
    source: null,
    keychainAvailable: true,
    keychainMessage: null,
    ...partial,
  };
}

/** A healthy core's health view (every component ok), with `partial` over it. */
export function healthView(partial: Partial<HealthView> = {}): HealthView {
  const ok = (id: HealthView['components'][number]['id'], reason: string): HealthView['components'][number] => ({
    id,
    state: 'ok',
    reason,
    reasonNotes: [],
    action: null,
    actionNotes: null,
  });
  return {
    state: 'ok',
    summary: 'All is well: webhooks reach Tally and recordings are saved.',
    summaryNotes: [{ code: 'healthAllOk' }],
    components: [
      ok('receiver', 'Receiving webhooks on 127.0.0.1:8787.'),
      ok('publicPath', 'The public URL forwards to this receiver (a signed probe came back).'),
      ok('registration', 'The service sends recordings to this URL.'),
      ok('downloads', 'No download needs attention.'),
      ok('disk', '120 GB free for recordings.'),
    ],
    receiver: { host: '127.0.0.1', port: 8787, configuredPort: 8787, portFollows: false },
    problems: 0,
    checkedAt: '2026-11-26T09:00:00.000Z',
    ...partial,
  };
}

/** No tunnel open, the receiver's local URL known; `partial` says what differs. */
export function tunnelStatus(partial: Partial<TunnelStatus> = {}): TunnelStatus {
  return { ...tunnelOff('none', 'http://127.0.0.1:4590/webhook'), ...partial };
}

export function gapReport(partial: Partial<GapReport> = {}): GapReport {
  return { since: null, checkedAt: null, missing: [], error: null, ...partial };
}

/** Applies a settings patch the way the core does (nested groups merge, the rest replaces). */
export function applyPatch(current: SettingsView, patch: SettingsPatch): SettingsView {
  return {
    ...current,
    ...patch,
    notifications: { ...current.notifications, ...patch.notifications },
    tunnel: { ...current.tunnel, ...patch.tunnel },
    endpoints: { ...current.endpoints, ...patch.endpoints },
  } as SettingsView;
}

// ---------------------------------------------------------------------------------------------------

/** The in-memory core. `bridge` is what components receive. */
export class TestBridge implements Transport {
  readonly bridge: TallyBridge;
  readonly calls: RecordedCall[] = [];
  /** Mutable state behind the stateful default handlers. */
  settings: SettingsView = settingsView();
  credentials: CredentialsStatus = credentialsStatus();
  tunnel: TunnelStatus = tunnelStatus();
  health: HealthView = healthView();
  studio: StudioView = {
    mode: 'off',
    url: null,
    name: null,
    retentionDays: 7,
    replicas: null,
    credentials: null,
    status: { state: 'off', message: null },
    recordings: [],
    members: [],
  };
  clipboard: string[] = [];
  readonly #handlers: Handlers;
  readonly #listeners = new Map<EventName, Set<(payload: unknown) => void>>();

  constructor(overrides: Partial<Handlers> = {}) {
    this.#handlers = { ...this.#defaults(), ...overrides } as Handlers;
    this.bridge = createBridge(this);
  }

  /** Replaces the answer to one request. */
  handle<K extends RequestName>(name: K, handler: Handler<K>): this {
    (this.#handlers as Record<RequestName, unknown>)[name] = handler;
    return this;
  }

  /** Makes one request fail with a RemoteError, as the core reports errors. */
  fail(name: RequestName, code: string, message: string): this {
    (this.#handlers as Record<RequestName, unknown>)[name] = () => {
      throw new RemoteError(code, message);
    };
    return this;
  }

  /** Pushes an event to every subscriber, as the core does. */
  emit<E extends EventName>(event: E, payload: EventMap[E]): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) listener(structuredClone(payload));
  }

  /** Argument tuples of every call to `name`, oldest first. */
  callsOf<K extends RequestName>(name: K): RequestMap[K]['args'][] {
    return this.calls.filter((c) => c.name === name).map((c) => c.args as RequestMap[K]['args']);
  }

  /** How many listeners an event has (to check that views unsubscribe). */
  listenerCount(event: EventName): number {
    return this.#listeners.get(event)?.size ?? 0;
  }

  async invoke(name: RequestName, args: readonly unknown[]): Promise<unknown> {
    const cloned = structuredClone([...args]);
    this.calls.push({ name, args: cloned });
    await Promise.resolve();
    const handler = this.#handlers[name] as (...a: unknown[]) => unknown;
    return structuredClone(await handler(...cloned));
  }

  subscribe(event: EventName, listener: (payload: unknown) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  #defaults(): Handlers {
    return {
      'app:info': () => appInfo(),
      'app:diagnostics': () => ({ text: 'Tally diagnostics (test bridge)' }),
      'app:rendererError': () => ({ logged: true }),
      'channels:live': () => [],
      'channels:search': () => ({ totalCount: 0, channels: [], truncated: false }),
      'channels:end': () => ({ ended: true }),
      'recordings:list': () => [],
      'recordings:retry': (key) => {
        throw new RemoteError('not_found', `No recording ${key}`);
      },
      'recordings:reveal': () => ({ ok: true }),
      'recordings:open': () => ({ ok: true }),
      'recordings:path': (key) => ({ path: `/recordings/${key}.mp4` }),
      'recordings:thumbnail': () => ({ dataUrl: null }),
      'recordings:remove': () => ({ ok: true }),
      'recordings:gaps': () => gapReport(),
      'settings:get': () => this.settings,
      'settings:update': (patch) => (this.settings = applyPatch(this.settings, patch)),
      'settings:chooseFolder': () => null,
      'credentials:status': () => this.credentials,
      'credentials:set': ({ serviceId }) =>
        (this.credentials = { ...this.credentials, configured: true, serviceId, source: 'keychain' }),
      'credentials:clear': () =>
        (this.credentials = { ...this.credentials, configured: false, serviceId: null, source: null }),
      'settings:checkFolder': () => ({ ok: true, message: null }),
      'credentials:setNgrokToken': () => (this.credentials = { ...this.credentials, ngrokTokenStored: true }),
      'credentials:clearNgrokToken': () => (this.credentials = { ...this.credentials, ngrokTokenStored: false }),
      'credentials:test': () => ({ ok: true, message: 'Connected to the service.' }),
      'tunnel:status': () => this.tunnel,
      'health:get': () => this.health,
      'webhook:register': () => (this.tunnel = { ...this.tunnel, registered: true }),
      'clipboard:write': (text) => {
        this.clipboard.push(text);
        return { ok: true };
      },
      'studio:get': () => this.studio,
      'studio:set': (input) => (this.studio = { ...this.studio, ...input }),
      'studio:setCredentials': (url, creds) =>
        (this.studio = {
          ...this.studio,
          credentials: { server: url.replace(/^\w+:\/\//, ''), kind: 'token' in creds ? 'token' : 'user' },
        }),
      'studio:clearCredentials': () => (this.studio = { ...this.studio, credentials: null }),
      'studio:test': () => ({ ok: true, message: 'Connected; JetStream is on (1 streams).' }),
    };
  }
}

/** A clock the spec moves by hand; `every` callbacks fire as time passes. */
export class ManualClock implements Clock {
  #now: number;
  #timers = new Set<{ ms: number; next: number; fn: () => void }>();

  constructor(start: number | string = '2024-05-14T12:00:00.000Z') {
    this.#now = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.#now;
  }

  every(ms: number, fn: () => void): () => void {
    const timer = { ms, next: this.#now + ms, fn };
    this.#timers.add(timer);
    return () => this.#timers.delete(timer);
  }

  /** Moves time forward, firing each due interval callback in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = [...this.#timers].filter((t) => t.next <= target).sort((a, b) => a.next - b.next)[0];
      if (!due) break;
      this.#now = due.next;
      due.next += due.ms;
      due.fn();
    }
    this.#now = target;
  }
}
