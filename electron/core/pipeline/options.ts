/**
 * Settings + environment + flags -> recording pipeline options, for the app core and `tally listen`
 * alike. The two faces used to assemble these separately and drifted apart (registration scope, upload
 * origins read once or on every request); now both call `pipelineOptions` and only their inputs differ.
 */
import { resolve } from 'node:path';
import type { Endpoints } from '../endpoints.js';
import type { Logger } from '../logger.js';
import type { Credentials } from '../model.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { defaultRecordingsDir } from '../paths.js';
import type { PipelineApi, PipelineOptions } from './pipeline.js';
import { followsStudio, type Settings } from '../settings.js';
import type { TunnelSettingsInput } from '../tunnels/index.js';

/** What `tally listen` may override on its command line; the app passes none. */
export interface PipelineFlags {
  folder?: string;
  host?: string;
  port?: number;
  tunnel?: Partial<TunnelSettingsInput>;
  /** `--register`: register even when the autoRegisterWebhook setting is off. */
  register?: boolean;
  concurrency?: number;
  /** Extra browser origins allowed to upload, besides the uploadOrigins setting. */
  uploadOrigins?: readonly string[];
  /** `--team` (with `--store`, `--retention`): this receiver shares with a studio, whatever the settings say. */
  studio?: { servers: string[]; store?: string; retentionMs?: number; replicas?: number };
}

/**
 * Studio mode as configured (docs/studio.md): plain data, acted on by core/studio above the pipeline. A flag
 * makes this a receiver; otherwise the studio setting decides, never in demo mode (the sandbox's recordings
 * are not the studio's).
 */
export interface PipelineStudio {
  mode: 'receiver' | 'follow';
  /** The team server, or every server of a cluster (the first one the credentials are bound to). */
  servers: string[];
  /** Receiver: the cluster's copies of each stream and store (null: as they are, 1 when new). */
  replicas: number | null;
  /** `nats` or s3://bucket/prefix (receiver). */
  store: string;
  retentionMs: number;
  /** The member name (follow); null means the computer's name. */
  name: string | null;
}

/** The embedded demo sandbox, when the app runs against it instead of the service. */
export interface PipelineDemo {
  stateDir: string;
  /** Where recordings go while the recordings folder is still the default one. */
  folder: string;
  /** The sandbox's loopback download origin, allowed in demo mode only. */
  downloadOrigin: string;
  /** The sandbox page's origin, whose web client uploads like the web SDK does. */
  apiUrl: string;
  /** Recordings the demo's own folder keeps, newest first (never applied to a folder the producer chose). */
  keepRecordings?: number;
  /** How long the sandbox keeps a recording, in real time (its 6 hours sped up by its time factor). */
  retentionMs?: number;
}

export interface PipelineInputs {
  settings: Settings;
  /** The settings as they are now: upload origins are read on every request, so edits apply at once. */
  currentSettings: () => Settings;
  env: NodeJS.ProcessEnv;
  /** The state folder (TALLY_HOME or the app data folder). */
  home: string;
  flags?: PipelineFlags;
  /** Credentials from the CredentialResolver (so already bound to `endpoints`), or null. */
  credentials: Credentials | null;
  endpoints: Endpoints;
  api: PipelineApi | null;
  ngrokAuthtoken: string | null;
  demo?: PipelineDemo | null;
  log?: Logger;
}

/**
 * The recordings folder: a flag wins, then the setting, except that the demo keeps its recordings apart
 * while the setting is still the default.
 */
export function recordingsFolderFor(settings: Settings, demo: Pick<PipelineDemo, 'folder'> | null, flag?: string) {
  if (flag !== undefined) return resolve(flag);
  if (demo && settings.recordingsFolder === defaultRecordingsDir()) return demo.folder;
  return resolve(settings.recordingsFolder);
}

/**
 * The registration record's scope: the project and the admin host it was registered with, so switching
 * either registers the webhook URL again.
 */
export function registrationScope(credentials: Credentials, endpoints: Endpoints): string {
  return `${credentials.serviceId} ${endpoints.adminUrl}`;
}

/**
 * Pipeline options plus a key that changes exactly when a running pipeline has to be rebuilt (the cheap
 * settings such as folder and concurrency are applied to a running pipeline instead).
 */
export function studioFor(settings: Settings, demo: boolean, flag?: PipelineFlags['studio']): PipelineStudio | null {
  const day = 24 * 60 * 60 * 1000;
  if (flag) {
    return {
      mode: 'receiver',
      servers: flag.servers,
      replicas: flag.replicas ?? null,
      store: flag.store ?? 'nats',
      retentionMs: flag.retentionMs ?? settings.studio.retentionDays * day,
      name: null,
    };
  }
  const s = settings.studio;
  if (demo || s.mode === 'off' || s.servers.length === 0) return null;
  const replicas = s.mode === 'receiver' ? s.replicas : null;
  return {
    mode: s.mode,
    servers: s.servers,
    replicas,
    store: s.store,
    retentionMs: s.retentionDays * day,
    name: s.name,
  };
}

/**
 * Whether the receiver registers its webhook URL by itself: `--register` says so explicitly, else the
 * autoRegisterWebhook setting, which has no effect on a studio member: the service keeps one URL per service,
 * so a member's would silently take the webhooks away from the studio's receiver. (`--team` makes this
 * computer the receiver, whatever the studio setting says.)
 */
export function autoRegisterFor(settings: Settings, flags: Pick<PipelineFlags, 'register' | 'studio'> = {}): boolean {
  if (flags.register !== undefined) return flags.register;
  if (!flags.studio && followsStudio(settings)) return false;
  return settings.autoRegisterWebhook;
}

/**
 * TALLY_CHECK_INTERVAL_MS: how often the public path is proven again (a signed probe through the public URL) while
 * it works; default 60 s. One knob for every face, so a monitor can tighten it.
 */
function checkInterval(env: NodeJS.ProcessEnv): { tunnelCheckIntervalMs?: number } {
  const raw = env.TALLY_CHECK_INTERVAL_MS;
  if (raw === undefined || raw.trim() === '') return {};
  const ms = Number(raw);
  return Number.isInteger(ms) && ms >= 100 && ms <= 3_600_000 ? { tunnelCheckIntervalMs: ms } : {};
}

export function pipelineOptions(inputs: PipelineInputs): {
  options: PipelineOptions;
  key: string;
  studio: PipelineStudio | null;
} {
  const { settings, flags = {}, demo = null, api, credentials } = inputs;
  const base = DownloadOriginPolicy.fromEnv(inputs.env, settings.downloadOrigins);
  // The sandbox serves recordings from loopback: allowed for its exact origin only, and only in demo mode.
  const origins = demo ? [...base.origins, demo.downloadOrigin] : base.origins;
  const policy = demo ? new DownloadOriginPolicy(origins) : base;
  const tunnel: TunnelSettingsInput = {
    provider: settings.tunnel.provider,
    publicUrl: settings.tunnel.publicUrl ?? null,
    ngrokDomain: settings.tunnel.ngrokDomain ?? null,
    localtunnelHost: settings.tunnel.localtunnelHost ?? null,
    ...flags.tunnel,
  };
  const scope = !demo && credentials ? registrationScope(credentials, inputs.endpoints) : null;
  const extraOrigins = [...(flags.uploadOrigins ?? []), ...(demo ? [demo.apiUrl] : [])];
  const options: PipelineOptions = {
    stateDir: demo ? demo.stateDir : inputs.home,
    folder: recordingsFolderFor(settings, demo, flags.folder),
    policy,
    host: flags.host ?? settings.receiverHost,
    port: flags.port ?? settings.receiverPort,
    tunnel,
    ngrokAuthtoken: inputs.ngrokAuthtoken,
    // The demo sandbox gets the local URL directly; only the real service needs the public one.
    register: api && !demo ? autoRegisterFor(settings, flags) : undefined,
    api,
    projectScope: scope,
    concurrency: flags.concurrency ?? settings.concurrency,
    maxRecordingBytes: settings.maxRecordingBytes,
    fileNameTemplate: settings.fileNameTemplate,
    ...(demo?.keepRecordings !== undefined && recordingsFolderFor(settings, demo, flags.folder) === demo.folder
      ? { keepNewestRecordings: demo.keepRecordings }
      : {}),
    ...(inputs.log ? { log: inputs.log } : {}),
    ...checkInterval(inputs.env),
    // The demo's broadcasts record only now and then: a closed channel without a recording is normal there.
    ...(demo ? { expectRecordings: false } : {}),
    // A demo recording's deadline is when the sandbox really deletes it ("Expires in" says so).
    ...(demo?.retentionMs === undefined ? {} : { retentionMs: demo.retentionMs }),
    uploads: {
      subfolder: settings.clientUploadsSubfolder,
      maxBytes: settings.uploadMaxBytes,
      allowedOrigins: () => [...inputs.currentSettings().uploadOrigins, ...extraOrigins],
    },
  };
  const key = JSON.stringify({
    stateDir: options.stateDir,
    origins,
    host: options.host,
    port: options.port,
    tunnel,
    ngrok: inputs.ngrokAuthtoken !== null,
    registrar: options.register !== undefined,
    hasApi: api !== null,
    scope,
    template: options.fileNameTemplate,
    maxRecordingBytes: settings.maxRecordingBytes,
    uploads: [settings.clientUploadsSubfolder, settings.uploadMaxBytes],
    sandbox: demo ? demo.apiUrl : null,
  });
  return { options, key, studio: studioFor(settings, demo !== null, flags.studio) };
}
