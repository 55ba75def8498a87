/**
 * The sandbox: a faithful local emulator of the service. Two real HTTP servers (the API host with the
 * service, admin and control endpoints, and an S3-like download host) over one in-memory state. The app
 * embeds it as its default backend and every test uses it as the real HTTP peer.
 *
 * ```ts
 * const sandbox = await startSandbox({ webhookUrl: 'http://127.0.0.1:8080/hook' });
 * sandbox.control.startBroadcast({ id: 'demo-1' });
 * const recording = await sandbox.control.endBroadcast('demo-1'); // webhook already attempted
 * await sandbox.close();
 * ```
 */
import { randomInt } from 'node:crypto';
import type { Endpoints } from '../endpoints.js';
import { createApiServer } from './api-server.js';
import { Scheduler, VirtualClock } from './clock.js';
import { createDownloadServer } from './download-server.js';
import { closeServer, listen, trackSockets } from './server-http.js';
import { recordingSizeFor } from './recording-file.js';
import { Rng } from './rng.js';
import { attachChannelHook } from './channel-hook-sender.js';
import { SandboxService, assertHttpUrl, type ServiceConfig } from './service.js';
import { DemoSimulation } from './simulation.js';
import type { Sandbox, SandboxOptions, WebhookShape } from './types.js';
import { WEB_CLIENT_PATH, uploadClientRecording, type WebClientSandbox } from './web-client.js';

export type {
  BroadcastInfo,
  FaultSpec,
  RecordingInfo,
  Sandbox,
  SandboxControl,
  SandboxOptions,
  SandboxRequestEvent,
  SandboxTarget,
  WebhookDelivery,
  WebhookShape,
} from './types.js';
export { SandboxConflictError, SandboxNotFoundError } from './service.js';
export { SandboxClosedError } from './clock.js';
export type { ClientUploadResult, WebClientControl, WebClientSandbox } from './web-client.js';
export { attachDemoWebClient } from './web-client.js';

export const SANDBOX_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  serviceId: 'sandbox-service',
  secret: 'sandbox-secret',
  searchIndexDelayMs: 3000,
  retentionMs: 6 * 60 * 60 * 1000,
  searchLimit: 1000,
  webhookShape: 'json' as WebhookShape,
  webhookTimeoutMs: 10_000,
  defaultRecordingBytes: 4 * 1024 * 1024,
});

function nonNegative(value: number | undefined, fallback: number, what: string): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`${what} must be a number of at least 0, got ${v}`);
  return v;
}

function port(value: number | undefined, what: string): number {
  const v = value ?? 0;
  if (!Number.isInteger(v) || v < 0 || v > 65535) throw new RangeError(`${what} must be a port from 0 to 65535`);
  return v;
}

/** Applies defaults and checks every option, so a bad option fails at start and not mid-test. */
export function resolveConfig(options: SandboxOptions): ServiceConfig {
  const serviceId = options.serviceId ?? SANDBOX_DEFAULTS.serviceId;
  const secret = options.secret ?? SANDBOX_DEFAULTS.secret;
  if (!serviceId || !secret) throw new TypeError('serviceId and secret must not be empty');
  const searchLimit = options.searchLimit ?? SANDBOX_DEFAULTS.searchLimit;
  if (!Number.isInteger(searchLimit) || searchLimit < 1)
    throw new RangeError('searchLimit must be a whole number of at least 1');
  const webhookShape = options.webhookShape ?? SANDBOX_DEFAULTS.webhookShape;
  if (!['json', 'get', 'spec'].includes(webhookShape)) throw new TypeError(`unknown webhook shape "${webhookShape}"`);
  const webhookSpecEncoding = options.webhookSpecEncoding ?? 'json';
  if (webhookSpecEncoding !== 'json' && webhookSpecEncoding !== 'form') {
    throw new TypeError(`webhookSpecEncoding must be json or form`);
  }
  const webhookUrl = options.webhookUrl ?? null;
  if (webhookUrl !== null) assertHttpUrl(webhookUrl, 'webhookUrl');
  const retentionMs = nonNegative(options.retentionMs, SANDBOX_DEFAULTS.retentionMs, 'retentionMs');
  const defaultRecordingBytes = options.defaultRecordingBytes ?? SANDBOX_DEFAULTS.defaultRecordingBytes;
  recordingSizeFor(defaultRecordingBytes);
  return {
    serviceId,
    secret,
    searchIndexDelayMs: nonNegative(
      options.searchIndexDelayMs,
      SANDBOX_DEFAULTS.searchIndexDelayMs,
      'searchIndexDelayMs',
    ),
    retentionMs,
    searchLimit,
    webhookShape,
    webhookSpecEncoding,
    webhookDelayMs: nonNegative(options.webhookDelayMs, 0, 'webhookDelayMs'),
    webhookTimeoutMs: nonNegative(options.webhookTimeoutMs, SANDBOX_DEFAULTS.webhookTimeoutMs, 'webhookTimeoutMs'),
    webhookUrl,
    recordingEnabled: options.recordingEnabled ?? true,
    defaultRecordingBytes,
  };
}

/** The host to put in URLs: a wildcard bind address is reached through loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Starts both servers (and the demo simulation if asked); resolves once both listen. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox & WebClientSandbox> {
  const config = resolveConfig(options);
  const host = options.host ?? SANDBOX_DEFAULTS.host;
  const apiPort = port(options.port, 'port');
  const downloadPort = port(options.downloadPort, 'downloadPort');
  const clock = new VirtualClock(options.timeFactor ?? 1);
  const scheduler = new Scheduler(clock);
  const rng = new Rng(options.seed ?? randomInt(0, 2 ** 32));
  const service = new SandboxService(config, clock, scheduler, rng);

  const apiServer = createApiServer(service);
  const downloadServer = createDownloadServer(service);
  const apiSockets = trackSockets(apiServer);
  const downloadSockets = trackSockets(downloadServer);
  let simulation: DemoSimulation | null = null;
  let closing: Promise<void> | null = null;
  const hookAbort = new AbortController();
  const detachChannelHook = attachChannelHook(service, {
    timeoutMs: config.webhookTimeoutMs,
    signal: hookAbort.signal,
  });
  const close = (): Promise<void> => {
    closing ??= (async () => {
      detachChannelHook();
      hookAbort.abort();
      simulation?.stop();
      service.close();
      scheduler.close();
      await Promise.all([closeServer(apiServer, apiSockets), closeServer(downloadServer, downloadSockets)]);
    })();
    return closing;
  };

  let boundApi: number;
  let boundDownload: number;
  try {
    boundApi = await listen(apiServer, apiPort, host);
    boundDownload = await listen(downloadServer, downloadPort, host);
  } catch (error) {
    await close();
    throw error;
  }
  const apiUrl = `http://${urlHost(host)}:${boundApi}`;
  const downloadOrigin = `http://${urlHost(host)}:${boundDownload}`;
  service.setDownloadOrigin(downloadOrigin);
  if (options.demo) simulation = new DemoSimulation(service, scheduler, rng).start();

  const endpoints: Endpoints = Object.freeze({
    baseUrl: apiUrl,
    consoleApiUrl: `${apiUrl}/console`,
    adminUrl: `${apiUrl}/admin`,
  });
  return Object.freeze({
    apiUrl,
    endpoints,
    downloadOrigin,
    get realRetentionMs() {
      return config.retentionMs / clock.factor;
    },
    credentials: Object.freeze({ serviceId: config.serviceId, secret: config.secret }),
    // The web client (web-client.ts) rides along on the control object: one place for everything a demo drives.
    control: Object.assign(service, {
      uploadClientRecording: (
        recordUrl: string,
        opts: Parameters<WebClientSandbox['control']['uploadClientRecording']>[1] = {},
      ) => uploadClientRecording(recordUrl, { ...opts, serviceId: config.serviceId }),
    }),
    webClientUrl: (recordUrl?: string) =>
      `${apiUrl}${WEB_CLIENT_PATH}${recordUrl ? `?recordUrl=${encodeURIComponent(recordUrl)}` : ''}`,
    close,
  });
}
