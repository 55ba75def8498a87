import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { TunnelSupervisor } from './supervisor.js';
import type { ReconnectScheduled, UrlChange } from './supervisor.js';
import { createTunnelProvider } from './index.js';
import { NgrokTunnel, normalizeNgrokDomain, redact } from './ngrok.js';
import { fakeNgrokSdk } from '../../../tests/support/tunnels/fake-ngrok-sdk.js';
import type { FakeNgrokSdk } from '../../../tests/support/tunnels/fake-ngrok-sdk.js';
import { startTestReceiver, supervisedReceiver, waitForEvent } from '../../../tests/support/tunnels/receiver.js';
import type { TestReceiver } from '../../../tests/support/tunnels/receiver.js';
import { TunnelError } from './types.js';
import type { TunnelStatus } from './types.js';

const AUTHTOKEN = '2abcDEFghiJKLmnoPQRstuVWXyz_0123456789ABCDEFG';
const TOKEN = 'hook-token';
const NONCE = 'nonce-ngrok';

let receiver: TestReceiver;
let sdk: FakeNgrokSdk;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  receiver = await startTestReceiver({ token: TOKEN, id: NONCE });
  sdk = fakeNgrokSdk({ acceptedAuthtoken: AUTHTOKEN });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await sdk.close();
  await receiver.close();
});

/** Everything a supervisor emits, serialised, for "the token never shows up" checks. */
function record(supervisor: TunnelSupervisor): string[] {
  const out: string[] = [];
  for (const event of ['status', 'url-changed', 'reconnect-scheduled'] as const) {
    supervisor.on(event, (payload: unknown) => out.push(JSON.stringify(payload)));
  }
  return out;
}

function supervise(provider: NgrokTunnel): TunnelSupervisor {
  const supervisor = new TunnelSupervisor({
    provider,
    ...supervisedReceiver(receiver),
    expectedId: NONCE,
    retryCheckIntervalMs: 20,
    backoff: { baseMs: 5, maxMs: 40 },
    random: () => 1,
    connectTo: sdk.connectTo,
  });
  cleanups.push(() => supervisor.stop());
  return supervisor;
}

const reachable = (s: TunnelStatus): boolean => s.state === 'reachable';

describe('ngrok through the SDK boundary', () => {
  it('passes the authtoken and static domain explicitly, reports the URL, and reopens the same URL after a lost session', async () => {
    const provider = createTunnelProvider(
      { provider: 'ngrok', ngrokDomain: 'https://Tally-Test.ngrok-free.app/' },
      { ngrokAuthtoken: AUTHTOKEN, ngrokSdk: sdk },
    ) as NgrokTunnel;
    const supervisor = supervise(provider);
    const emitted = record(supervisor);
    const changes: UrlChange[] = [];
    supervisor.on('url-changed', (change) => changes.push(change));

    const first = waitForEvent<TunnelStatus>(supervisor, 'status', reachable);
    supervisor.start();
    const status = await first;

    expect(sdk.forwardCalls).toHaveLength(1);
    expect(sdk.forwardCalls[0]).toMatchObject({
      addr: `127.0.0.1:${receiver.port}`,
      proto: 'http',
      authtoken: AUTHTOKEN,
      authtoken_from_env: false,
      domain: 'tally-test.ngrok-free.app',
    });
    expect(status).toMatchObject({
      provider: 'ngrok',
      publicUrl: `http://tally-test.ngrok-free.app/hooks/${TOKEN}`,
      localUrl: receiver.localUrl,
      message: 'Reachable through ngrok.',
    });

    const lost = waitForEvent<ReconnectScheduled>(supervisor, 'reconnect-scheduled');
    const back = waitForEvent<TunnelStatus>(supervisor, 'status', reachable);
    sdk.dropSession();
    expect((await lost).reason).toBe('Tunnel closed: The connection to ngrok was lost.');
    await back;
    expect(sdk.forwardCalls).toHaveLength(2);
    expect(sdk.openListeners).toBe(1);
    // Same static domain, same URL: nothing to re-register.
    expect(changes).toHaveLength(1);

    await supervisor.stop();
    expect(sdk.openListeners).toBe(0);
    expect(emitted.join('\n')).not.toContain(AUTHTOKEN);
    expect(JSON.stringify(provider)).not.toContain(AUTHTOKEN);
    expect(inspect(provider, { depth: 5, showHidden: true })).not.toContain(AUTHTOKEN);
  });

  it('announces a new URL when a reconnect without a static domain gets another one', async () => {
    const supervisor = supervise(new NgrokTunnel({ authtoken: AUTHTOKEN, sdk }));
    const first = waitForEvent<TunnelStatus>(supervisor, 'status', reachable);
    supervisor.start();
    const before = (await first).publicUrl;
    expect(before).toMatch(new RegExp(`^http://[0-9a-f]{12}\\.ngrok-free\\.test/hooks/${TOKEN}$`));

    const changed = waitForEvent<UrlChange>(supervisor, 'url-changed');
    const back = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => reachable(s) && s.publicUrl !== before);
    sdk.dropSession();
    const change = await changed;
    expect(change.previous).toBe(before);
    expect((await back).publicUrl).toBe(change.current);
  });

  it('never lets a rejected authtoken into errors, statuses or events, and does not retry a bad token', async () => {
    const wrong = 'WRONG_token_1234567890abcdefghijklmnop';
    const provider = new NgrokTunnel({ authtoken: wrong, sdk });
    const direct = await provider.open({ host: receiver.host, port: receiver.port }).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(ConfigError);
    expect((direct as Error).message).toBe(
      'ngrok did not accept the authtoken (ERR_NGROK_107). Copy it again from the ngrok dashboard and set it in Settings → How the service reaches Tally (ngrok authtoken) or with `tally login --ngrok`.',
    );
    expect(sdk.forwardCalls[0]?.authtoken).toBe(wrong);
    expect(JSON.stringify(direct)).not.toContain(wrong);
    expect(inspect(direct, { depth: 5 })).not.toContain(wrong);
    expect((direct as Error).cause).toBeUndefined();

    const supervisor = supervise(provider);
    const emitted = record(supervisor);
    let retries = 0;
    supervisor.on('reconnect-scheduled', () => retries++);
    const failed = waitForEvent<TunnelStatus>(supervisor, 'status', (s) => s.state === 'error');
    supervisor.start();
    expect((await failed).message).toMatch(/did not accept the authtoken/);
    expect(retries).toBe(0);
    expect(emitted.join('\n')).not.toContain(wrong);
  });

  it('redacts the token from any other SDK error too', async () => {
    const leaky: FakeNgrokSdk = {
      ...sdk,
      forward: async () => {
        throw new Error(`session failed for ${AUTHTOKEN} at the edge`);
      },
    };
    const error = await new NgrokTunnel({ authtoken: AUTHTOKEN, sdk: leaky })
      .open({ host: '127.0.0.1', port: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TunnelError);
    expect((error as Error).message).toBe('ngrok could not open the tunnel: session failed for [redacted] at the edge');
    // Redaction happens before shortening, so a cut can never leave part of the token behind.
    expect(redact(`${'x'.repeat(295)}${AUTHTOKEN}`, AUTHTOKEN)).toBe(`${'x'.repeat(295)}[reda...`);
  });

  it('maps a domain that is already online to a retryable TunnelError', async () => {
    const a = new NgrokTunnel({ authtoken: AUTHTOKEN, domain: 'same.ngrok-free.app', sdk });
    const b = new NgrokTunnel({ authtoken: AUTHTOKEN, domain: 'same.ngrok-free.app', sdk });
    await a.open({ host: receiver.host, port: receiver.port });
    const error = await b.open({ host: receiver.host, port: receiver.port }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TunnelError);
    expect((error as TunnelError).providerCode).toBe('ERR_NGROK_334');
    await a.close();
  });

  it('requires an authtoken and a host-name domain', () => {
    expect(() => createTunnelProvider({ provider: 'ngrok' }, {})).toThrow(
      new ConfigError(
        'ngrok needs an authtoken: set it in Settings → How the service reaches Tally → ngrok authtoken, or with `tally login --ngrok` (the keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
      ),
    );
    expect(() => createTunnelProvider({ provider: 'ngrok' }, { ngrokAuthtoken: '  ' })).toThrow(ConfigError);
    expect(normalizeNgrokDomain(' https://My-Name.ngrok-free.app/ ')).toBe('my-name.ngrok-free.app');
    expect(() => normalizeNgrokDomain('not a domain')).toThrow(/not an ngrok domain/);
    expect(() => normalizeNgrokDomain('https://x.ngrok-free.app/path')).toThrow(/not an ngrok domain/);
  });
});
