/**
 * The settings file shared by the CLI and the tray app (`settings.json` in the app data folder).
 * One zod schema owns defaults and validation; a damaged field falls back to its default with a
 * warning instead of costing the user every other setting. Secrets never live here: they go to the
 * OS keychain (credentials.ts), and keys that look like secrets are dropped on read and refused on write.
 */
import { renameSync } from 'node:fs';
import { z } from 'zod';
import { note } from './notes.js';
import { ValidationError } from './errors.js';
import { appDataDir, defaultRecordingsDir, expandFolder } from './paths.js';
import { openJsonSettingsFile } from './settings-file.js';
import { describeIssues } from './validate.js';
import { LOG_LEVELS } from './logger.js';

/** Version written by this build. Bump it and add a migration whenever a field changes meaning. */
export const SETTINGS_VERSION = 2;

const httpUrl = z
  .string()
  .trim()
  .refine((value) => isHttpUrl(value), { message: 'expected an http(s) URL' })
  .transform((value) => value.replace(/\/+$/, ''));

const origin = z
  .string()
  .trim()
  .refine((value) => isHttpUrl(value), { message: 'expected an http(s) origin such as https://example.com' })
  .transform((value) => new URL(value).origin);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const folderName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((value) => !/[/\\]/.test(value) && value !== '.' && value !== '..', {
    message: 'expected a single folder name',
  });

export const NotificationsSchema = z.object({
  saved: z.boolean().default(true),
  failed: z.boolean().default(true),
  unreachable: z.boolean().default(true),
  /**
   * "Channel X is live", from the channel lifecycle hook. Off by default: the hook reports every channel of the
   * service, other producers' too, and a busy studio would get one notification per broadcast.
   */
  live: z.boolean().default(false),
});

export const TunnelSchema = z.object({
  provider: z.enum(['none', 'url', 'ngrok', 'localtunnel']).default('none'),
  /** With provider 'url': the public URL something else forwards to the receiver. */
  publicUrl: httpUrl.optional(),
  /** With provider 'ngrok': the account's static domain, for a webhook URL that survives restarts. */
  ngrokDomain: z.string().trim().min(1).max(253).optional(),
  /** With provider 'localtunnel': the tunnel server to use instead of the public default. */
  localtunnelHost: httpUrl.optional(),
});

/**
 * Studio mode (docs/studio.md): this computer is the studio's receiver (shares every saved recording with the
 * team server) or follows a studio (mirrors its recordings into the recordings folder). Credentials for the
 * team server live in the keychain, never here.
 */
export const StudioSchema = z.object({
  mode: z.enum(['off', 'receiver', 'follow']).default('off'),
  /**
   * The team server, or every server of a team cluster (`tally listen --team a,b,c`), each nats://HOST:PORT or
   * tls://HOST:PORT; the first is the one the credentials are bound to. Empty: none chosen yet.
   */
  servers: z
    .array(
      z
        .string()
        .trim()
        .max(2048)
        .regex(/^(nats|tls):\/\/[^\s/@,]+$/, 'must be nats://HOST:PORT or tls://HOST:PORT'),
    )
    .max(16)
    .default([]),
  /** This member's name on the team server (default: the computer's name). */
  name: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .nullable()
    .default(null),
  /** Receiver only: `nats` or s3://bucket/prefix. */
  store: z.string().trim().max(1024).default('nats'),
  /** Receiver only: how long the team keeps recordings. */
  retentionDays: z.number().int().min(1).max(365).default(7),
  /**
   * Receiver only: how many servers of a cluster keep the stream, the buckets and the object store (`--replicas`):
   * 1, 3 or 5; null keeps what the team server has (1 when it creates them), as `tally listen` does without the flag.
   */
  replicas: z
    .union([z.literal(1), z.literal(3), z.literal(5)])
    .nullable()
    .default(null),
});

export const EndpointOverridesSchema = z.object({
  baseUrl: httpUrl.optional(),
  consoleApiUrl: httpUrl.optional(),
  adminUrl: httpUrl.optional(),
});

/** Every setting with its default. Unknown keys are stripped. */
export const SettingsSchema = z.object({
  version: z.literal(SETTINGS_VERSION).default(SETTINGS_VERSION),
  recordingsFolder: z
    .string()
    .trim()
    .min(1)
    .transform((value) => expandFolder(value))
    .default(() => defaultRecordingsDir()),
  pollIntervalSec: z.number().int().min(1).max(3600).default(5),
  endpoints: EndpointOverridesSchema.prefault({}),
  /** Origins recordings may be downloaded from; null means the documented default. */
  downloadOrigins: z.array(origin).nullable().default(null),
  fileNameTemplate: z.string().trim().min(1).max(200).default('{channelId}'),
  concurrency: z.number().int().min(1).max(10).default(3),
  notifications: NotificationsSchema.prefault({}),
  launchAtLogin: z.boolean().default(false),
  language: z.enum(['system', 'en', 'ko']).default('system'),
  tunnel: TunnelSchema.prefault({}),
  autoRegisterWebhook: z.boolean().default(false),
  /** Port of the webhook receiver; a fixed default keeps a registered webhook URL valid across restarts. */
  receiverPort: z.number().int().min(0).max(65_535).default(8787),
  receiverHost: z.string().trim().min(1).max(253).default('127.0.0.1'),
  /** Web page origins allowed to upload client recordings (CORS). */
  uploadOrigins: z.array(origin).default([]),
  clientUploadsSubfolder: folderName.default('client'),
  /** The largest recording downloaded when neither the server nor the webhook says its size (64 GiB). */
  maxRecordingBytes: z
    .number()
    .int()
    .min(1024 ** 2)
    .max(Number.MAX_SAFE_INTEGER)
    .default(64 * 1024 ** 3),
  uploadMaxBytes: z
    .number()
    .int()
    .positive()
    .max(Number.MAX_SAFE_INTEGER)
    .default(2 * 1024 ** 3),
  /** null: not chosen yet, so demo mode follows whether credentials exist (see effectiveDemoMode). */
  demoMode: z.boolean().nullable().default(null),
  /** Whether the popover's first-run guide was finished or skipped (it shows until then). */
  firstRunDone: z.boolean().default(false),
  studio: StudioSchema.prefault({}),
  /**
   * How much the log files hold: info (the event trail, warnings, errors) unless a bug is being chased (debug);
   * `--debug` / `--log-level` override it for one command.
   */
  logLevel: z.enum(LOG_LEVELS).default('info'),
  /**
   * The generic update feed the tray app checks (a folder holding electron-builder's `latest*.yml` and the files
   * it names); null: the feed the build was published with (its app-update.yml).
   */
  updateFeedUrl: httpUrl.nullable().default(null),
});

export type Settings = z.output<typeof SettingsSchema>;

/** A partial update; the three nested objects may themselves be partial. */
export type SettingsPatch = Partial<Omit<Settings, 'version' | 'endpoints' | 'notifications' | 'tunnel'>> & {
  endpoints?: Partial<Settings['endpoints']>;
  notifications?: Partial<Settings['notifications']>;
  tunnel?: Partial<Settings['tunnel']>;
};

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze(SettingsSchema.parse({}));

const NESTED: Readonly<Record<string, z.ZodObject>> = {
  endpoints: EndpointOverridesSchema,
  notifications: NotificationsSchema,
  tunnel: TunnelSchema,
};

/** Keys that would mean someone tried to keep a credential in the settings file. */
const SECRET_KEY_RE = /secret|password|passwd|token|authtoken|api[-_]?key|credential/i;

/** Conf's own bookkeeping key; not ours, never reported. */
const CONF_INTERNAL_KEY = '__internal__';

type Raw = Record<string, unknown>;

/** Each migration turns version N into version N+1. Version 0 means "no version field". */
export const MIGRATIONS: Readonly<Record<number, (raw: Raw) => Raw>> = Object.freeze({
  // Files written before versioning: the same fields, plus an older name for the poll interval.
  0: (raw: Raw): Raw => {
    const { pollInterval, ...rest } = raw;
    const next: Raw = { ...rest, version: 1 };
    if (next.pollIntervalSec === undefined && pollInterval !== undefined) next.pollIntervalSec = pollInterval;
    return next;
  },
  // Studio mode took one team server (`studio.url`); it now keeps a list, so a cluster's servers fit too.
  1: (raw: Raw): Raw => {
    const next: Raw = { ...raw, version: 2 };
    if (!isPlainObject(raw.studio)) return next;
    const { url, ...studio } = raw.studio;
    const servers = typeof url === 'string' && url.trim() !== '' ? [url] : [];
    next.studio = studio.servers === undefined ? { ...studio, servers } : studio;
    return next;
  },
});

/**
 * Unknown in, valid Settings out. Old versions are migrated step by step; each invalid field is reset
 * to its default (nested objects field by field) and reported in `warnings`; unknown and secret-like
 * keys are dropped.
 */
export function migrateSettingsWithWarnings(raw: unknown): { settings: Settings; warnings: string[] } {
  const warnings: string[] = [];
  if (raw === undefined || raw === null) return { settings: SettingsSchema.parse({}), warnings };
  if (!isPlainObject(raw)) {
    warnings.push('The settings file does not hold an object; all settings were reset to their defaults.');
    return { settings: SettingsSchema.parse({}), warnings };
  }

  let current: Raw = { ...raw };
  let version = typeof current.version === 'number' && Number.isInteger(current.version) ? current.version : 0;
  if (version > SETTINGS_VERSION) {
    warnings.push(
      `The settings file was written by a newer version of Tally (format ${version}); fields this version does not know are ignored.`,
    );
    current.version = SETTINGS_VERSION;
    version = SETTINGS_VERSION;
  }
  while (version < SETTINGS_VERSION) {
    const step = MIGRATIONS[version];
    if (!step) {
      warnings.push(`No migration from settings format ${version}; unreadable fields were reset.`);
      current.version = SETTINGS_VERSION;
      break;
    }
    current = step(current);
    version += 1;
  }

  const out = sanitizeObject(SettingsSchema, current, '', warnings);
  return { settings: SettingsSchema.parse(out), warnings };
}

/** `migrateSettingsWithWarnings` without the warnings. */
export function migrateSettings(raw: unknown): Settings {
  return migrateSettingsWithWarnings(raw).settings;
}

function sanitizeObject(schema: z.ZodObject, raw: Raw, prefix: string, warnings: string[]): Raw {
  const out: Raw = {};
  const shape = schema.shape as Record<string, z.ZodType>;
  for (const key of Object.keys(raw)) {
    if (key in shape || key === CONF_INTERNAL_KEY) continue;
    warnings.push(
      SECRET_KEY_RE.test(key)
        ? `Dropped "${prefix}${key}": secrets are kept in the OS keychain, never in the settings file.`
        : `Ignored unknown setting "${prefix}${key}".`,
    );
  }
  for (const [key, fieldSchema] of Object.entries(shape)) {
    const value = raw[key];
    if (value === undefined) continue;
    // Nested objects are checked field by field, so one bad or unknown field costs only itself.
    const nested = prefix === '' ? NESTED[key] : undefined;
    if (nested && isPlainObject(value)) {
      out[key] = sanitizeObject(nested, value, `${key}.`, warnings);
      continue;
    }
    const result = fieldSchema.safeParse(value);
    if (result.success) {
      out[key] = result.data;
      continue;
    }
    const { detail } = describeIssues(result.error.issues);
    warnings.push(`Setting "${prefix}${key}" was invalid (${detail}); using the default.`);
  }
  return out;
}

function isPlainObject(value: unknown): value is Raw {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Strict form of a patch: unknown keys (a `secret`, say) are an error, not silently dropped. */
const PatchSchema = SettingsSchema.omit({ version: true })
  .extend({
    endpoints: EndpointOverridesSchema.partial().strict().optional(),
    notifications: NotificationsSchema.partial().strict().optional(),
    tunnel: TunnelSchema.partial().strict().optional(),
  })
  .partial()
  .strict();

/** The fields named by zod (a schema's words, in English) are kept for the CLI; the popover names the fields. */
function invalidSettings(issues: readonly z.core.$ZodIssue[]): ValidationError {
  const { paths, detail } = describeIssues(issues);
  const fields = paths.map((path) => path || '(root)').join(', ');
  return new ValidationError(paths, note('invalidSettings', { detail, detailNote: 'invalidFields', fields }));
}

/**
 * Applies a patch to valid settings: nested objects merge field by field; `undefined` in a nested
 * optional field removes it. Throws ValidationError naming every bad path; nothing is half-applied.
 */
export function applySettingsPatch(base: Settings, patch: unknown): Settings {
  const checked = PatchSchema.safeParse(patch);
  if (!checked.success) {
    throw invalidSettings(checked.error.issues);
  }
  // Validate the raw patch values, but merge the *input* so transforms run exactly once below.
  const input = patch as Raw;
  const merged: Raw = { ...base };
  for (const [key, value] of Object.entries(input)) {
    if (NESTED[key] && isPlainObject(value)) merged[key] = { ...(base[key as keyof Settings] as Raw), ...value };
    else merged[key] = value;
  }
  const result = SettingsSchema.safeParse(merged);
  if (!result.success) {
    throw invalidSettings(result.error.issues);
  }
  return result.data;
}

/**
 * This computer is a studio member (Settings → Studio → "Follow a studio"): the studio's receiver alone talks
 * to the service for it, so it neither registers a webhook URL nor needs the service credentials.
 */
export function followsStudio(settings: Settings): boolean {
  return settings.studio.mode === 'follow' && settings.studio.servers.length > 0;
}

/**
 * Demo mode when the user chose it, or, before any choice, whenever there are no credentials. A studio member
 * is never in demo mode: it mirrors the team's real recordings and needs no service credentials for that
 * (docs/studio.md), so the sandbox would only stand in the way.
 */
export function effectiveDemoMode(settings: Settings, hasCredentials: boolean): boolean {
  if (followsStudio(settings)) return false;
  return settings.demoMode ?? !hasCredentials;
}

export interface SettingsStore {
  /** Current settings, re-read from disk (the app and the CLI may both write the file). */
  get(): Settings;
  /** Validates, merges and writes a patch; returns the new settings. Throws ValidationError. */
  update(patch: SettingsPatch): Settings;
  /** Absolute path of the settings file. */
  readonly path: string;
  /** What was repaired when the file was last read. */
  readonly warnings: readonly string[];
}

/**
 * Opens `settings.json` in `dir` (the app data folder by default): the one way the tray app, `tally serve` and
 * every CLI command read and write settings (one schema, one migration path, one writer: settings-file.ts). A
 * file that is not JSON at all is moved aside to `settings.json.corrupt-<time>` (kept for the user) and defaults
 * are used.
 */
export function openSettingsStore(dir: string = appDataDir()): SettingsStore {
  const corruptNotes: string[] = [];
  const file = openJsonSettingsFile({ cwd: dir, configName: 'settings' });
  let warnings: string[] = [];

  const readRaw = (): unknown => {
    try {
      return file.store;
    } catch (error) {
      if (error instanceof SyntaxError) {
        moveAside(file.path, corruptNotes);
        return {};
      }
      throw error;
    }
  };

  const get = (): Settings => {
    const raw = readRaw();
    const result = migrateSettingsWithWarnings(raw);
    warnings = [...corruptNotes.splice(0), ...result.warnings];
    const rawVersion = isPlainObject(raw) ? raw.version : undefined;
    // Persist a migration once, so older files are upgraded rather than re-migrated on every read.
    if (isPlainObject(raw) && Object.keys(raw).length > 0 && rawVersion !== SETTINGS_VERSION) {
      file.store = toStorable(result.settings);
    }
    return result.settings;
  };

  return {
    get,
    update(patch: SettingsPatch): Settings {
      const next = applySettingsPatch(get(), patch);
      file.store = toStorable(next);
      return next;
    },
    get path() {
      return file.path;
    },
    get warnings() {
      return warnings;
    },
  };
}

function moveAside(file: string, notes: string[]): void {
  const target = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(file, target);
  notes.push(`The settings file was not valid JSON; it was moved to ${target} and defaults are used.`);
}

/** Optional fields that are undefined are left out so the JSON file stays clean. */
function toStorable(settings: Settings): Raw {
  return JSON.parse(JSON.stringify(settings)) as Raw;
}
