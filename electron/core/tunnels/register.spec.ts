import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BadCredentialsError, NetworkError, ValidationError } from '../errors.js';
import { AutoRegistrar, REGISTRATION_FILE, readRegistration, registerWebhook } from './register.js';
import { FakeRegistrationSource } from '../../../tests/support/tunnels/registration-source.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-reg-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const FakeSource = FakeRegistrationSource;

function recordingApi(fail?: () => Error | undefined): { calls: string[]; setRecordHook(url: string): Promise<void> } {
  const calls: string[] = [];
  return {
    calls,
    async setRecordHook(url: string) {
      calls.push(url);
      const error = fail?.();
      if (error) throw error;
    },
  };
}

const A = 'https://a.example.com/hooks/tok';
const B = 'https://b.example.com/hooks/tok';

describe('registerWebhook', () => {
  it('calls setRecordHook with the URL and passes typed API errors through', async () => {
    const api = recordingApi();
    const result = await registerWebhook({ api, publicWebhookUrl: A, now: () => new Date('2026-03-04T05:06:07Z') });
    expect(result).toEqual({ url: A, registeredAt: '2026-03-04T05:06:07.000Z', channelHookError: null });
    expect(api.calls).toEqual([A]);

    const rejecting = recordingApi(() => new BadCredentialsError());
    await expect(registerWebhook({ api: rejecting, publicWebhookUrl: A })).rejects.toBeInstanceOf(BadCredentialsError);
    await expect(registerWebhook({ api, publicWebhookUrl: 'ftp://x/hooks/t' })).rejects.toBeInstanceOf(ValidationError);
    await expect(registerWebhook({ api, publicWebhookUrl: 'https://u:p@x/hooks/t' })).rejects.toThrow(
      /user name or password/,
    );
    expect(api.calls).toEqual([A]);
  });

  it('sets the channel lifecycle hook to the same URL; its failure is reported, not fatal', async () => {
    const hooks: string[] = [];
    const api = {
      ...recordingApi(),
      setChannelHook: async (url: string) => {
        hooks.push(url);
        if (hooks.length > 1) throw new Error('admin said no');
      },
    };
    expect(await registerWebhook({ api, publicWebhookUrl: A })).toMatchObject({ url: A, channelHookError: null });
    expect(hooks).toEqual([A]);
    expect(await registerWebhook({ api, publicWebhookUrl: A })).toMatchObject({ channelHookError: 'admin said no' });
  });
});

describe('AutoRegistrar', () => {
  it('registers each new URL once, remembers it atomically, and skips it after a restart', async () => {
    const api = recordingApi();
    const source = new FakeSource();
    const registrar = new AutoRegistrar({ api, stateDir: join(dir, 'state'), enabled: true, scope: 'svc-1' });
    const registered: string[] = [];
    registrar.on('registered', (r) => registered.push(r.url));
    registrar.attach(source);

    source.change(A);
    source.reachable();
    source.reachable();
    await registrar.idle();
    expect(api.calls).toEqual([A]);
    expect(registered).toEqual([A]);
    expect(source.registeredUrl).toBe(A);

    source.change(B);
    source.reachable();
    await registrar.idle();
    expect(api.calls).toEqual([A, B]);

    const file = JSON.parse(await readFile(join(dir, 'state', REGISTRATION_FILE), 'utf8')) as Record<string, unknown>;
    expect(file).toMatchObject({ version: 2, url: B, scope: 'svc-1' });
    expect(await readdir(join(dir, 'state'))).toEqual([REGISTRATION_FILE]);

    // A restart that gets the same URL back does not call the service again, and marks it registered.
    const restarted = new AutoRegistrar({ api, stateDir: join(dir, 'state'), enabled: true, scope: 'svc-1' });
    const again = new FakeSource();
    restarted.attach(again);
    again.change(B);
    again.reachable();
    await restarted.idle();
    expect(api.calls).toEqual([A, B]);
    expect(again.registeredUrl).toBe(B);

    // Another project (scope) with the same URL must be registered.
    const otherProject = new AutoRegistrar({ api, stateDir: join(dir, 'state'), enabled: true, scope: 'svc-2' });
    const third = new FakeSource();
    otherProject.attach(third);
    third.change(B);
    await otherProject.idle();
    expect(api.calls).toEqual([A, B, B]);
  });

  it('registers only the newest of quickly changing URLs', async () => {
    const api = recordingApi();
    const source = new FakeSource();
    const registrar = new AutoRegistrar({ api, stateDir: dir, enabled: true });
    registrar.attach(source);
    source.change(A);
    source.change(B);
    await registrar.idle();
    expect(api.calls).toEqual([B]);
  });

  it('does nothing while disabled and registers the current URL when enabled', async () => {
    const api = recordingApi();
    const source = new FakeSource();
    const registrar = new AutoRegistrar({ api, stateDir: dir, enabled: false });
    registrar.attach(source);
    source.change(A);
    source.reachable();
    await registrar.idle();
    expect(api.calls).toEqual([]);
    registrar.setEnabled(true);
    await registrar.idle();
    expect(api.calls).toEqual([A]);
  });

  it('reports failures with the typed error, retries transient ones on the next good check, not bad credentials', async () => {
    let error: Error | undefined = new NetworkError('recordhook', 'connection refused');
    const api = recordingApi(() => error);
    const source = new FakeSource();
    const registrar = new AutoRegistrar({ api, stateDir: dir, enabled: true });
    const failures: Error[] = [];
    registrar.on('failed', (f) => failures.push(f.error));
    registrar.attach(source);

    source.change(A);
    await registrar.idle();
    expect(failures[0]).toBeInstanceOf(NetworkError);
    expect(registrar.lastError).toBe(failures[0]);
    expect(await readRegistration(dir)).toBeNull();

    error = new BadCredentialsError();
    source.reachable();
    await registrar.idle();
    expect(api.calls).toEqual([A, A]);
    expect(failures[1]).toBeInstanceOf(BadCredentialsError);

    // Bad credentials: no retry on every check...
    source.reachable();
    await registrar.idle();
    expect(api.calls).toHaveLength(2);

    // ...but an explicit request goes through, and its error reaches the caller.
    error = undefined;
    await expect(registrar.registerNow()).resolves.toMatchObject({ url: A });
    expect(api.calls).toEqual([A, A, A]);
    expect(registrar.lastError).toBeNull();
  });

  it('registerNow re-registers a URL already on record, and ignores a damaged state file', async () => {
    await writeFile(join(dir, REGISTRATION_FILE), '{ not json');
    const api = recordingApi();
    const registrar = new AutoRegistrar({ api, stateDir: dir, enabled: false });
    expect(await registrar.lastRegistered()).toBeNull();
    await registrar.registerNow(A);
    await registrar.registerNow(A);
    expect(api.calls).toEqual([A, A]);
    expect((await readRegistration(dir))?.url).toBe(A);
    await expect(new AutoRegistrar({ api, stateDir: dir, enabled: true }).registerNow()).rejects.toThrow(
      /no public webhook URL/,
    );
  });
});
