/**
 * End to end against the sandbox emulator: its webhooks, in every documented shape, become inbox jobs whose
 * URLs pass the download policy, and re-sent webhooks are recognised as duplicates.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import { startSandbox } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { WebhookReceiver } from './receiver.js';
import { TokenStore } from './token.js';

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(specEncoding: 'json' | 'form' = 'json'): Promise<{
  sandbox: Sandbox;
  inbox: Inbox;
  receiver: WebhookReceiver;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-e2e-hooks-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const sandbox = await startSandbox({ webhookSpecEncoding: specEncoding, seed: 7, defaultRecordingBytes: 4096 });
  cleanups.push(() => sandbox.close());
  const inbox = await Inbox.open(dir);
  cleanups.push(() => inbox.close());
  // The sandbox serves recordings from a loopback origin: it must be allowed explicitly, as a user would.
  const policy = DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: sandbox.downloadOrigin });
  const receiver = new WebhookReceiver({ inbox, policy, tokens: await TokenStore.open(dir) });
  await receiver.start();
  cleanups.push(() => receiver.stop());
  sandbox.control.setWebhookUrl(receiver.localUrl);
  return { sandbox, inbox, receiver };
}

describe('sandbox webhooks land as jobs', () => {
  it.each([
    ['json', 'json'],
    ['get', 'get'],
    ['spec', 'spec'],
  ] as const)('in the %s shape', async (shape, expectedShape) => {
    const { sandbox, inbox } = await setup();
    sandbox.control.setWebhookShape(shape);
    sandbox.control.startBroadcast({ id: `ch-${shape}`, record: true });
    const recording = await sandbox.control.endBroadcast(`ch-${shape}`);
    expect(recording).not.toBeNull();
    expect(sandbox.control.webhookDeliveries()).toMatchObject([{ status: 200, error: null }]);
    const jobs = inbox.list();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ channelId: `ch-${shape}`, shape: expectedShape, state: 'pending' });
    expect(jobs[0]?.url).toBe(shape === 'get' ? recording?.legacyUrl : recording?.url);
    if (shape === 'json') expect(jobs[0]?.announcedBytes).toBe(recording?.size);
  });

  it('in the spec shape, URL-encoded', async () => {
    const { sandbox, inbox } = await setup('form');
    sandbox.control.setWebhookShape('spec');
    sandbox.control.startBroadcast({ id: 'ch form/ü', record: true });
    const recording = await sandbox.control.endBroadcast('ch form/ü');
    expect(sandbox.control.webhookDeliveries()).toMatchObject([{ status: 200 }]);
    expect(inbox.list()).toMatchObject([{ channelId: 'ch form/ü', url: recording?.url, shape: 'spec' }]);
  });

  it('recognises re-sent webhooks, in the same and in other shapes, as duplicates', async () => {
    const { sandbox, inbox, receiver } = await setup();
    let duplicates = 0;
    receiver.on('duplicate', () => (duplicates += 1));
    sandbox.control.startBroadcast({ id: 'again', record: true });
    await sandbox.control.endBroadcast('again');
    for (const shape of ['json', 'spec', 'get'] as const) {
      expect((await sandbox.control.resendWebhook('again', shape)).status).toBe(200);
    }
    expect(duplicates).toBe(3);
    expect(inbox.list()).toHaveLength(1);
  });

  it('refuses a sandbox whose download origin is not allowed (422), storing nothing', async () => {
    const { sandbox, inbox, receiver } = await setup();
    const strictDir = await mkdtemp(join(tmpdir(), 'tally-e2e-strict-'));
    cleanups.push(() => rm(strictDir, { recursive: true, force: true }));
    const strict = new WebhookReceiver({
      inbox,
      policy: DownloadOriginPolicy.fromEnv({}),
      tokens: await TokenStore.open(strictDir),
    });
    await strict.start();
    cleanups.push(() => strict.stop());
    sandbox.control.setWebhookUrl(strict.localUrl);
    sandbox.control.startBroadcast({ id: 'blocked', record: true });
    await sandbox.control.endBroadcast('blocked');
    expect(sandbox.control.webhookDeliveries()).toMatchObject([{ status: 422 }]);
    expect(inbox.list()).toEqual([]);
    expect(receiver.localUrl).not.toBe(strict.localUrl);
  });
});
