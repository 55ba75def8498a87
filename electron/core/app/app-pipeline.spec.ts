/**
 * The app's pipeline options against the sandbox's admin API over real HTTP: the client it hands the pipeline
 * must set the channel lifecycle hook as well as the recording webhook, or the app's automatic registration
 * (unlike `tally listen --register`) would never get channel events.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../sandbox/index.js';
import { DEFAULT_SETTINGS } from '../settings.js';
import { appPipelineSpec, buildAppApi } from './app-pipeline.js';

let sandbox: Sandbox | null = null;
let home: string | null = null;
afterEach(async () => {
  await sandbox?.close();
  if (home) await rm(home, { recursive: true, force: true });
  sandbox = home = null;
});

describe('appPipelineSpec', () => {
  it('gives the registrar a client that sets both the recording webhook and the channel lifecycle hook', async () => {
    sandbox = await startSandbox({ seed: 3 });
    home = await mkdtemp(join(tmpdir(), 'tally-app-pipeline-'));
    const { endpoints, credentials } = sandbox;
    const client = buildAppApi(null, endpoints, credentials, '0.0.0-test');
    const { spec } = appPipelineSpec({
      settings: DEFAULT_SETTINGS,
      currentSettings: () => DEFAULT_SETTINGS,
      env: {},
      home,
      log: () => {},
      credentials,
      endpoints,
      api: () => client!,
      ngrokAuthtoken: null,
      sandbox: null,
    });
    const url = 'http://127.0.0.1:9/hooks/abc';
    await spec.api?.setRecordHook(url);
    await spec.api?.setChannelHook?.(url);
    expect(sandbox.control.webhookUrl).toBe(url);
    expect(sandbox.control.channelWebhookUrl).toBe(url);
    expect(spec.register).toBe(DEFAULT_SETTINGS.autoRegisterWebhook);
  });
});
