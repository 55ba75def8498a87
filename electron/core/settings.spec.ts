import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from './errors.js';
import { defaultRecordingsDir } from './paths.js';
import {
  DEFAULT_SETTINGS,
  SETTINGS_VERSION,
  SettingsSchema,
  applySettingsPatch,
  effectiveDemoMode,
  migrateSettings,
  migrateSettingsWithWarnings,
  openSettingsStore,
} from './settings.js';

describe('defaults', () => {
  it('has every documented default', () => {
    expect(DEFAULT_SETTINGS).toEqual({
      version: SETTINGS_VERSION,
      recordingsFolder: defaultRecordingsDir(),
      pollIntervalSec: 5,
      endpoints: {},
      downloadOrigins: null,
      fileNameTemplate: '{channelId}',
      concurrency: 3,
      notifications: { saved: true, failed: true, unreachable: true, live: false },
      launchAtLogin: false,
      language: 'system',
      tunnel: { provider: 'none' },
      autoRegisterWebhook: false,
      receiverPort: 8787,
      receiverHost: '127.0.0.1',
      uploadOrigins: [],
      clientUploadsSubfolder: 'client',
      maxRecordingBytes: 64 * 1024 ** 3,
      uploadMaxBytes: 2 * 1024 ** 3,
      demoMode: null,
      firstRunDone: false,
      studio: { mode: 'off', servers: [], name: null, store: 'nats', retentionDays: 7, replicas: null },
      logLevel: 'info',
      updateFeedUrl: null,
    });
    expect(Object.isFrozen(DEFAULT_SETTINGS)).toBe(true);
  });

  it('demo mode follows credentials until the user chooses', () => {
    expect(effectiveDemoMode(DEFAULT_SETTINGS, false)).toBe(true);
    expect(effectiveDemoMode(DEFAULT_SETTINGS, true)).toBe(false);
    expect(effectiveDemoMode({ ...DEFAULT_SETTINGS, demoMode: true }, true)).toBe(true);
    expect(effectiveDemoMode({ ...DEFAULT_SETTINGS, demoMode: false }, false)).toBe(false);
  });

  it('a studio member is never in demo mode, with or without service credentials', () => {
    const studio = { ...DEFAULT_SETTINGS.studio, mode: 'follow' as const, servers: ['nats://studio.local:4222'] };
    expect(effectiveDemoMode({ ...DEFAULT_SETTINGS, studio }, false)).toBe(false);
    expect(effectiveDemoMode({ ...DEFAULT_SETTINGS, studio, demoMode: true }, false)).toBe(false);
    // Follow chosen without a URL yet follows nothing: demo mode as before.
    expect(effectiveDemoMode({ ...DEFAULT_SETTINGS, studio: { ...studio, servers: [] } }, false)).toBe(true);
  });
});

describe('secrets never enter settings', () => {
  it('the schema strips secret-like keys', () => {
    const parsed = SettingsSchema.parse({ secret: 'abc', serviceSecret: 'abc', ngrokAuthtoken: 'tok' });
    expect(JSON.stringify(parsed)).not.toContain('abc');
    expect(parsed).not.toHaveProperty('secret');
    expect(parsed).not.toHaveProperty('ngrokAuthtoken');
  });

  it('migration drops them with a warning that says where secrets go', () => {
    const { settings, warnings } = migrateSettingsWithWarnings({ version: 1, secret: 'abc', tunnel: { token: 't' } });
    expect(JSON.stringify(settings)).not.toContain('abc');
    expect(settings.tunnel).toEqual({ provider: 'none' });
    expect(warnings.join('\n')).toMatch(/"secret".*keychain/);
    expect(warnings.join('\n')).toMatch(/"tunnel\.token".*keychain/);
  });

  it('a patch carrying a secret is refused, not silently stored', () => {
    expect(() => applySettingsPatch(DEFAULT_SETTINGS, { secret: 'abc' })).toThrow(ValidationError);
    expect(() => applySettingsPatch(DEFAULT_SETTINGS, { tunnel: { authtoken: 'abc' } })).toThrow(ValidationError);
  });
});

describe('migrateSettings', () => {
  it('turns anything that is not an object into defaults, with a warning', () => {
    for (const raw of [42, 'x', [1, 2], true]) {
      const { settings, warnings } = migrateSettingsWithWarnings(raw);
      expect(settings).toEqual(DEFAULT_SETTINGS);
      expect(warnings).toHaveLength(1);
    }
    expect(migrateSettings(undefined)).toEqual(DEFAULT_SETTINGS);
  });

  it('migrates an unversioned file, renaming the old poll interval key', () => {
    const { settings, warnings } = migrateSettingsWithWarnings({ pollInterval: 12, concurrency: 4 });
    expect(settings.version).toBe(SETTINGS_VERSION);
    expect(settings.pollIntervalSec).toBe(12);
    expect(settings.concurrency).toBe(4);
    expect(warnings).toEqual([]);
  });

  it('resets only the invalid fields and reports each one', () => {
    const { settings, warnings } = migrateSettingsWithWarnings({
      version: 1,
      concurrency: 50,
      pollIntervalSec: 'often',
      language: 'fr',
      recordingsFolder: '   ',
      launchAtLogin: true,
      receiverPort: 9000,
      notifications: { saved: false, failed: 'yes' },
      tunnel: { provider: 'ngrok', ngrokDomain: 'me.ngrok.app', publicUrl: 'not a url' },
      endpoints: { baseUrl: 'http://127.0.0.1:4000/', adminUrl: 'ftp://x' },
      uploadOrigins: ['https://a.example/path'],
      clientUploadsSubfolder: '../escape',
    });
    expect(settings.concurrency).toBe(3);
    expect(settings.pollIntervalSec).toBe(5);
    expect(settings.language).toBe('system');
    expect(settings.recordingsFolder).toBe(defaultRecordingsDir());
    expect(settings.clientUploadsSubfolder).toBe('client');
    // Valid neighbours survive, including valid fields inside a partly broken nested object.
    expect(settings.launchAtLogin).toBe(true);
    expect(settings.receiverPort).toBe(9000);
    expect(settings.notifications).toEqual({ saved: false, failed: true, unreachable: true, live: false });
    expect(settings.tunnel).toEqual({ provider: 'ngrok', ngrokDomain: 'me.ngrok.app' });
    expect(settings.endpoints).toEqual({ baseUrl: 'http://127.0.0.1:4000' });
    expect(settings.uploadOrigins).toEqual(['https://a.example']);
    const text = warnings.join('\n');
    for (const path of [
      'concurrency',
      'pollIntervalSec',
      'language',
      'recordingsFolder',
      'notifications.failed',
      'tunnel.publicUrl',
      'endpoints.adminUrl',
      'clientUploadsSubfolder',
    ]) {
      expect(text).toContain(`"${path}"`);
    }
    expect(warnings).toHaveLength(8);
  });

  it('reads a file from a newer version, keeping what it understands', () => {
    const { settings, warnings } = migrateSettingsWithWarnings({ version: 99, concurrency: 7, futureThing: 1 });
    expect(settings.concurrency).toBe(7);
    expect(settings.version).toBe(SETTINGS_VERSION);
    expect(warnings.join('\n')).toMatch(/newer version/);
    expect(warnings.join('\n')).toMatch(/futureThing/);
  });
});

describe('studio team servers and replicas', () => {
  it('moves the one team server of a version-1 file into the list, keeping the rest of the studio setting', () => {
    const { settings, warnings } = migrateSettingsWithWarnings({
      version: 1,
      studio: { mode: 'follow', url: 'nats://studio.local:4222', name: 'edit-bay', retentionDays: 3 },
    });
    expect(warnings).toEqual([]);
    expect(settings.studio).toEqual({
      mode: 'follow',
      servers: ['nats://studio.local:4222'],
      name: 'edit-bay',
      store: 'nats',
      retentionDays: 3,
      replicas: null,
    });
    expect(settings.studio).not.toHaveProperty('url');
    // No server chosen yet: an empty list, and nothing followed.
    const none = migrateSettings({ version: 1, studio: { mode: 'follow', url: null } });
    expect(none.studio.servers).toEqual([]);
    expect(effectiveDemoMode(none, false)).toBe(true);
  });

  it('upgrades a version-1 file on disk once, so the old url key is gone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-settings-studio-'));
    try {
      const file = join(dir, 'settings.json');
      await writeFile(
        file,
        JSON.stringify({ version: 1, studio: { mode: 'receiver', url: 'tls://nats.example:4222' } }),
      );
      expect(openSettingsStore(dir).get().studio.servers).toEqual(['tls://nats.example:4222']);
      const onDisk = JSON.parse(await readFile(file, 'utf8')) as { version: number; studio: Record<string, unknown> };
      expect(onDisk.version).toBe(SETTINGS_VERSION);
      expect(onDisk.studio).toMatchObject({ mode: 'receiver', servers: ['tls://nats.example:4222'] });
      expect(onDisk.studio).not.toHaveProperty('url');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('takes a list of nats:// or tls:// servers and 1, 3 or 5 replicas; anything else names the field', () => {
    const cluster = ['nats://a.local:4222', 'nats://b.local:4222', 'nats://c.local:4222'];
    const next = applySettingsPatch(DEFAULT_SETTINGS, {
      studio: { ...DEFAULT_SETTINGS.studio, mode: 'receiver', servers: cluster, replicas: 3 },
    });
    expect(next.studio).toMatchObject({ servers: cluster, replicas: 3 });
    const refused = (studio: Record<string, unknown>) => {
      try {
        applySettingsPatch(DEFAULT_SETTINGS, { studio: { ...DEFAULT_SETTINGS.studio, ...studio } });
      } catch (error) {
        return (error as ValidationError).paths;
      }
      return expect.unreachable();
    };
    expect(refused({ servers: ['http://a.local:4222'] })).toEqual(['studio.servers[0]']);
    expect(refused({ servers: ['nats://a.local:4222', 'nats://user:pw@b.local:4222'] })).toEqual(['studio.servers[1]']);
    expect(refused({ servers: ['nats://a.local:4222,nats://b.local:4222'] })).toEqual(['studio.servers[0]']);
    expect(refused({ replicas: 2 })).toEqual(['studio.replicas']);
    // A damaged studio setting on disk costs the studio setting, with a warning naming the field.
    const { settings, warnings } = migrateSettingsWithWarnings({ version: 2, studio: { servers: 'nats://x:1' } });
    expect(settings.studio).toEqual(DEFAULT_SETTINGS.studio);
    expect(warnings.join('\n')).toMatch(/"studio"/);
  });
});

describe('applySettingsPatch', () => {
  it('merges nested objects field by field and validates the result', () => {
    const next = applySettingsPatch(DEFAULT_SETTINGS, {
      notifications: { saved: false },
      tunnel: { provider: 'url', publicUrl: 'https://hooks.example.com/' },
      downloadOrigins: ['http://127.0.0.1:9000'],
    });
    expect(next.notifications).toEqual({ saved: false, failed: true, unreachable: true, live: false });
    expect(next.tunnel).toEqual({ provider: 'url', publicUrl: 'https://hooks.example.com' });
    expect(next.downloadOrigins).toEqual(['http://127.0.0.1:9000']);
  });

  it('names every bad path', () => {
    try {
      applySettingsPatch(DEFAULT_SETTINGS, { concurrency: 0, language: 'de' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).paths).toEqual(expect.arrayContaining(['concurrency', 'language']));
    }
  });
});

describe('openSettingsStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-settings-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('starts from defaults without writing, and persists updates', async () => {
    const store = openSettingsStore(dir);
    expect(store.path).toBe(join(dir, 'settings.json'));
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    // Reading alone writes nothing, so later changes to defaults reach users who never changed a setting.
    await expect(readFile(store.path, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    const next = store.update({ concurrency: 5, notifications: { failed: false } });
    expect(next.concurrency).toBe(5);
    const onDisk = JSON.parse(await readFile(store.path, 'utf8')) as Record<string, unknown>;
    expect(onDisk.concurrency).toBe(5);
    expect(onDisk.version).toBe(SETTINGS_VERSION);
    // A second store (the app next to the CLI) sees the change.
    expect(openSettingsStore(dir).get().notifications.failed).toBe(false);
  });

  it('refuses an invalid update and leaves the file unchanged', async () => {
    const store = openSettingsStore(dir);
    store.update({ concurrency: 4 });
    const before = await readFile(store.path, 'utf8');
    expect(() => store.update({ concurrency: 11 })).toThrow(ValidationError);
    expect(() => store.update({ secret: 'x' } as never)).toThrow(ValidationError);
    expect(await readFile(store.path, 'utf8')).toBe(before);
  });

  it('upgrades an old file on disk once', async () => {
    const file = join(dir, 'settings.json');
    await writeFile(file, JSON.stringify({ pollInterval: 9 }));
    const store = openSettingsStore(dir);
    expect(store.get().pollIntervalSec).toBe(9);
    const onDisk = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    expect(onDisk).toMatchObject({ version: SETTINGS_VERSION, pollIntervalSec: 9 });
    expect(onDisk).not.toHaveProperty('pollInterval');
  });

  it('repairs invalid fields on read and reports them', async () => {
    await writeFile(join(dir, 'settings.json'), JSON.stringify({ version: 1, concurrency: 'many', language: 'ko' }));
    const store = openSettingsStore(dir);
    const settings = store.get();
    expect(settings.language).toBe('ko');
    expect(settings.concurrency).toBe(3);
    expect(store.warnings.join('\n')).toMatch(/concurrency/);
  });

  it('moves a file that is not JSON aside instead of crashing or deleting it', async () => {
    const file = join(dir, 'settings.json');
    await writeFile(file, '{ this is not json');
    const store = openSettingsStore(dir);
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    const names = await readdir(dir);
    const aside = names.find((n) => n.startsWith('settings.json.corrupt-'));
    expect(aside).toBeDefined();
    expect(await readFile(join(dir, aside as string), 'utf8')).toBe('{ this is not json');
    expect(store.warnings.join('\n')).toMatch(/not valid JSON/);
    store.update({ concurrency: 2 });
    expect(openSettingsStore(dir).get().concurrency).toBe(2);
  });
});

describe('the recordings folder as a producer types it', () => {
  const base = migrateSettings({});
  it('takes ~ as the home folder, as the CLI examples write it, and saves the absolute folder', () => {
    expect(applySettingsPatch(base, { recordingsFolder: '~/Videos/Tally' }).recordingsFolder).toBe(
      join(homedir(), 'Videos', 'Tally'),
    );
    expect(applySettingsPatch(base, { recordingsFolder: ' ~ ' }).recordingsFolder).toBe(homedir());
  });

  it('takes a relative path from the home folder and normalises an absolute one', () => {
    expect(applySettingsPatch(base, { recordingsFolder: 'Videos/Shows' }).recordingsFolder).toBe(
      join(homedir(), 'Videos', 'Shows'),
    );
    expect(applySettingsPatch(base, { recordingsFolder: '/srv/rec/../tally/' }).recordingsFolder).toBe('/srv/tally');
  });
});
