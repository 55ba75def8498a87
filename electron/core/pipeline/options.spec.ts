import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PipelineOptions } from './pipeline.js';
import { DEFAULT_SETTINGS, type Settings } from '../settings.js';
import { pipelineOptions, recordingsFolderFor, type PipelineInputs } from './options.js';

const endpoints = {
  baseUrl: 'https://sig.test',
  consoleApiUrl: 'https://console.test',
  adminUrl: 'https://admin.test',
};
const api = { setRecordHook: async () => {}, search: async () => ({ channels: [] }) };

function inputs(over: Partial<PipelineInputs> = {}, settings: Partial<Settings> = {}): PipelineInputs {
  const current: Settings = {
    ...DEFAULT_SETTINGS,
    recordingsFolder: '/rec',
    uploadOrigins: ['https://app.test'],
    ...settings,
  };
  return {
    settings: current,
    currentSettings: () => current,
    env: { TALLY_DOWNLOAD_ORIGINS: 'https://cdn.test' },
    home: '/home/tally',
    credentials: { serviceId: 'svc', secret: 'sec' },
    endpoints,
    api,
    ngrokAuthtoken: null,
    ...over,
  };
}

/** Everything but the functions, which are compared by what they return. */
function plain(options: PipelineOptions) {
  const { uploads, policy, api: optionsApi, ...rest } = options;
  return { ...rest, origins: policy.origins, api: optionsApi !== null, uploadOrigins: uploads?.allowedOrigins() };
}

describe('pipelineOptions', () => {
  it('gives the same options for the same inputs, so the app and tally listen run the same pipeline', () => {
    const first = pipelineOptions(inputs());
    const second = pipelineOptions(inputs());
    expect(plain(first.options)).toEqual(plain(second.options));
    expect(first.key).toBe(second.key);
    expect(plain(first.options)).toEqual({
      stateDir: '/home/tally',
      folder: '/rec',
      origins: ['https://cdn.test'],
      host: DEFAULT_SETTINGS.receiverHost,
      port: DEFAULT_SETTINGS.receiverPort,
      tunnel: { provider: DEFAULT_SETTINGS.tunnel.provider, publicUrl: null, ngrokDomain: null, localtunnelHost: null },
      ngrokAuthtoken: null,
      register: DEFAULT_SETTINGS.autoRegisterWebhook,
      api: true,
      projectScope: 'svc https://admin.test',
      concurrency: DEFAULT_SETTINGS.concurrency,
      maxRecordingBytes: DEFAULT_SETTINGS.maxRecordingBytes,
      fileNameTemplate: DEFAULT_SETTINGS.fileNameTemplate,
      uploadOrigins: ['https://app.test'],
    });
  });

  it('lets listen flags win over settings', () => {
    const { options } = pipelineOptions(
      inputs({
        flags: {
          folder: 'rel/dir',
          host: '0.0.0.0',
          port: 0,
          concurrency: 7,
          register: true,
          tunnel: { provider: 'localtunnel' },
          uploadOrigins: ['https://flag.test'],
        },
      }),
    );
    expect(options).toMatchObject({
      folder: resolve('rel/dir'),
      host: '0.0.0.0',
      port: 0,
      concurrency: 7,
      register: true,
      tunnel: { provider: 'localtunnel', publicUrl: null },
    });
    expect(options.uploads?.allowedOrigins()).toEqual(['https://app.test', 'https://flag.test']);
  });

  it('reads the upload origins on every request, for the CLI as for the app', () => {
    let current: Settings = { ...DEFAULT_SETTINGS, uploadOrigins: [] };
    const { options } = pipelineOptions(inputs({ currentSettings: () => current }));
    expect(options.uploads?.allowedOrigins()).toEqual([]);
    current = { ...current, uploadOrigins: ['https://later.test'] };
    expect(options.uploads?.allowedOrigins()).toEqual(['https://later.test']);
  });

  it('never registers on a studio member, whatever autoRegisterWebhook says; --team makes it the receiver', () => {
    const studio = { ...DEFAULT_SETTINGS.studio, mode: 'follow' as const, servers: ['nats://studio.test:4222'] };
    const member = inputs({}, { autoRegisterWebhook: true, studio });
    expect(pipelineOptions(member).options.register).toBe(false);
    expect(pipelineOptions(inputs({}, { autoRegisterWebhook: true })).options.register).toBe(true);
    const receiver = { ...member, flags: { studio: { servers: ['nats://studio.test:4222'] } } };
    expect(pipelineOptions(receiver).options.register).toBe(true);
    // `tally listen --register` typed on a member's computer is an explicit choice.
    expect(pipelineOptions({ ...member, flags: { register: true } }).options.register).toBe(true);
  });

  it('registers nothing and scopes nothing without an API or credentials', () => {
    const { options, key } = pipelineOptions(inputs({ api: null, credentials: null }));
    expect(options.register).toBeUndefined();
    expect(options.projectScope).toBeNull();
    expect(key).not.toBe(pipelineOptions(inputs()).key);
  });

  it('keeps the demo apart: its own state folder, its sandbox origins, no registration', () => {
    const demo = {
      stateDir: '/home/tally/demo',
      folder: '/home/tally/demo-recordings',
      downloadOrigin: 'http://127.0.0.1:5001',
      apiUrl: 'http://127.0.0.1:5000',
    };
    const { options } = pipelineOptions(inputs({ demo }, { recordingsFolder: DEFAULT_SETTINGS.recordingsFolder }));
    expect(options).toMatchObject({
      stateDir: demo.stateDir,
      folder: demo.folder,
      register: undefined,
      projectScope: null,
    });
    expect(options.policy.origins).toEqual(['https://cdn.test', demo.downloadOrigin]);
    expect(options.uploads?.allowedOrigins()).toEqual(['https://app.test', demo.apiUrl]);
    // A folder the producer chose is used in the demo too.
    expect(recordingsFolderFor({ ...DEFAULT_SETTINGS, recordingsFolder: join('/mine') }, demo)).toBe('/mine');
    // The demo's own folder is kept to its newest recordings; a folder the producer chose never is.
    const kept = pipelineOptions(
      inputs({ demo: { ...demo, keepRecordings: 30 } }, { recordingsFolder: DEFAULT_SETTINGS.recordingsFolder }),
    );
    expect(kept.options.keepNewestRecordings).toBe(30);
    const mine = pipelineOptions(inputs({ demo: { ...demo, keepRecordings: 30 } }, { recordingsFolder: '/mine' }));
    expect(mine.options.keepNewestRecordings).toBeUndefined();
  });
});
