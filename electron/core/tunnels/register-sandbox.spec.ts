/**
 * AutoRegistrar against the sandbox's admin API over real HTTP: a registration on record from before the
 * channel lifecycle hook existed gets the hook (and only the hook), and a hook call the service refuses is
 * retried with growing waits until it is set, the record saying so throughout.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelApi } from '../api-client.js';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import { startReceiver } from '../../../tests/support/sandbox/http-helpers.js';
import { AutoRegistrar, REGISTRATION_FILE, readRegistration, type ChannelHookAttempt } from './register.js';
import { FakeRegistrationSource } from '../../../tests/support/tunnels/registration-source.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'tally-reg-sandbox-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const sandbox: Sandbox = await startSandbox({ seed: 11 });
  cleanups.push(() => sandbox.close());
  const hook = await startReceiver();
  cleanups.push(() => hook.close());
  const api = new ChannelApi({ endpoints: sandbox.endpoints, credentials: sandbox.credentials, retries: 0 });
  return { dir, sandbox, hook, api };
}

/** Resolves with the first `count` hook attempts the registrar reports. */
function attempts(registrar: AutoRegistrar, count: number): Promise<ChannelHookAttempt[]> {
  const seen: ChannelHookAttempt[] = [];
  return new Promise((resolve) =>
    registrar.on('channel-hook', (attempt) => {
      if (seen.push(attempt) === count) resolve(seen);
    }),
  );
}

describe('AutoRegistrar and the channel lifecycle hook (sandbox admin API)', () => {
  it('sets the missing hook of a version-1 record without registering the recording webhook again', async () => {
    const { dir, sandbox, hook, api } = await setup();
    await mkdir(dir, { recursive: true });
    const old = { version: 1, url: hook.url, scope: 'svc', registeredAt: '2026-01-02T03:04:05.000Z' };
    await writeFile(join(dir, REGISTRATION_FILE), JSON.stringify(old));
    expect(await readRegistration(dir)).toMatchObject({ url: hook.url, channelHookSet: false, channelHookError: null });

    const registrar = new AutoRegistrar({ api, stateDir: dir, enabled: true, scope: 'svc' });
    const source = new FakeRegistrationSource();
    const done = attempts(registrar, 1);
    registrar.attach(source);
    source.change(hook.url);
    expect(await done).toEqual([{ url: hook.url, error: null, retryInMs: null }]);
    await registrar.idle();

    expect(sandbox.control.channelWebhookUrl).toBe(hook.url);
    expect(sandbox.control.webhookUrl).toBeNull();
    expect(source.registeredUrl).toBe(hook.url);
    const file = JSON.parse(await readFile(join(dir, REGISTRATION_FILE), 'utf8')) as Record<string, unknown>;
    expect(file).toEqual({ ...old, version: 2, channelHookSet: true, channelHookError: null });

    // The sandbox now announces broadcasts to the hook.
    sandbox.control.startBroadcast({ id: 'now-live', record: false });
    const call = await hook.next();
    expect([call.method, call.url]).toEqual(['GET', '/hook?action=create&chid=now-live']);

    // Set once: a later restart with the same URL calls nothing (the cleared hook stays cleared).
    sandbox.control.setChannelWebhookUrl(null);
    const restarted = new AutoRegistrar({ api, stateDir: dir, enabled: true, scope: 'svc' });
    const again = new FakeRegistrationSource();
    restarted.attach(again);
    again.change(hook.url);
    await restarted.idle();
    expect(sandbox.control.channelWebhookUrl).toBeNull();
    expect(again.registeredUrl).toBe(hook.url);
  });

  it('retries a refused hook call with growing waits until set, and a restart retries a recorded failure', async () => {
    const { dir, sandbox, hook, api } = await setup();
    sandbox.control.setFaults('api', { path: '/admin/api/webhook/', status: 503, times: 3 });
    const registrar = new AutoRegistrar({
      api,
      stateDir: dir,
      enabled: true,
      channelHookRetry: { baseMs: 10, maxMs: 25 },
    });
    const registered: (string | null)[] = [];
    registrar.on('registered', (r) => registered.push(r.channelHookError));
    const source = new FakeRegistrationSource();
    const done = attempts(registrar, 4);
    registrar.attach(source);
    source.change(hook.url);

    const seen = await done;
    expect(seen.map((a) => a.retryInMs)).toEqual([10, 20, 25, null]);
    expect(seen.slice(0, 3).every((a) => a.error !== null && /503/.test(a.error))).toBe(true);
    expect(seen[3]?.error).toBeNull();
    expect(sandbox.control.webhookUrl).toBe(hook.url);
    expect(sandbox.control.channelWebhookUrl).toBe(hook.url);
    // Registered once with the hook's error, once more when the hook was finally set.
    expect(registered).toHaveLength(2);
    expect(registered[0]).toMatch(/503/);
    expect(registered[1]).toBeNull();
    await registrar.idle();
    expect(await readRegistration(dir)).toMatchObject({ channelHookSet: true, channelHookError: null });

    // A failure on record (the app quit before a retry) is retried on the next start.
    sandbox.control.setChannelWebhookUrl(null);
    const failed = { ...(await readRegistration(dir)), channelHookSet: false, channelHookError: 'HTTP 503' };
    await writeFile(join(dir, REGISTRATION_FILE), JSON.stringify({ version: 2, ...failed }));
    const restarted = new AutoRegistrar({ api, stateDir: dir, enabled: true });
    const retried = attempts(restarted, 1);
    const next = new FakeRegistrationSource();
    restarted.attach(next);
    next.change(hook.url);
    expect(await retried).toEqual([{ url: hook.url, error: null, retryInMs: null }]);
    expect(sandbox.control.channelWebhookUrl).toBe(hook.url);
  });
});
