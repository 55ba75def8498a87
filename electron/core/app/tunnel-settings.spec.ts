/**
 * Tunnel settings that cannot work (ngrok without an authtoken, a public URL or localtunnel server that is
 * refused) against the app core and its real embedded sandbox over HTTP: the choice is saved and pushed to the
 * page at once, the tunnel status names the field to fix, and the receiver keeps receiving and downloading
 * meanwhile. The ngrok cloud cannot be reached here, so its SDK is the loopback fake (fakeNgrokSdk).
 */
import { writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SettingsPatch } from '../../contract.js';
import { fakeNgrokSdk } from '../../../tests/support/tunnels/fake-ngrok-sdk.js';
import {
  cleanups,
  collect,
  makeCore,
  next,
  receivesAndSaves,
  runCleanups,
  tempHome,
} from '../../../tests/support/app/core-helpers.js';

afterEach(runCleanups);

const AUTHTOKEN = '2fake-ngrok-authtoken';

describe('AppCore with a tunnel setting that cannot work', () => {
  it('saves ngrok without an authtoken, keeps receiving, names the field, and opens once the authtoken is stored', async () => {
    const home = await tempHome();
    const sdk = fakeNgrokSdk({ acceptedAuthtoken: AUTHTOKEN });
    cleanups.push(() => sdk.close());
    const core = await makeCore(home, { pipelineOverrides: { retryBaseMs: 20, ngrokSdk: sdk } });
    const pushed = collect(core, 'settings:changed');
    await core.start();

    const failed = next(core, 'tunnel:status', (s) => s.provider === 'ngrok' && s.state === 'error');
    const answer = await core.handlers['settings:update']({ tunnel: { provider: 'ngrok' } });
    expect(answer.tunnel.provider).toBe('ngrok');
    expect(pushed.at(-1)?.payload.tunnel.provider).toBe('ngrok');

    const status = await failed;
    expect(status.message).toContain('Settings → How the service reaches Tally → ngrok authtoken');
    expect(status.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks\//);
    expect(await core.handlers['tunnel:status']()).toMatchObject({ provider: 'ngrok', state: 'error' });
    expect(core.traySnapshot().attention).toBe('The tunnel could not start');
    await receivesAndSaves(core, home, 'while-ngrok-waits');
    expect(sdk.forwardCalls).toEqual([]);

    // Storing the authtoken is enough: the tunnel opens without restarting anything by hand. (Its self-check
    // cannot leave this machine, so only the public URL it got is asserted.)
    const opened = next(core, 'tunnel:status', (s) => s.provider === 'ngrok' && s.publicUrl !== null);
    await core.handlers['credentials:setNgrokToken'](AUTHTOKEN);
    expect((await opened).publicUrl).toMatch(/^http:\/\/[0-9a-f]{12}\.ngrok-free\.test\/hooks\//);
    expect(sdk.forwardCalls.map((c) => c.authtoken)).toEqual([AUTHTOKEN]);
    await receivesAndSaves(core, home, 'after-the-authtoken');
  });

  it.each<{ name: string; tunnel: SettingsPatch['tunnel']; field: string }>([
    {
      name: 'an own public URL that is refused',
      tunnel: { provider: 'url', publicUrl: 'http://tally.example.com' },
      field: 'Settings → How the service reaches Tally → Public URL: The public URL must use https',
    },
    {
      name: 'a localtunnel server with a password in it',
      tunnel: { provider: 'localtunnel', localtunnelHost: 'https://user:pw@lt.example.com' },
      field: 'Settings → How the service reaches Tally → Server: The localtunnel server URL must not contain',
    },
  ])('saves $name, keeps receiving and names the field', async ({ tunnel, field }) => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    const failed = next(core, 'tunnel:status', (s) => s.provider === tunnel?.provider && s.state === 'error');
    const pushed = next(core, 'settings:changed');
    const answer = await core.handlers['settings:update']({ tunnel });
    expect(answer.tunnel).toMatchObject(tunnel ?? {});
    expect((await pushed).tunnel).toMatchObject(tunnel ?? {});
    expect((await failed).message).toContain(field);
    await receivesAndSaves(core, home, `while-${tunnel?.provider}-waits`);
  });

  it('pushes a saved change even when the restart it needs fails', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    // The recordings folder turned into a file behind the app's back: the next rebuild cannot start.
    await rm(join(home, 'recordings'), { recursive: true, force: true });
    await writeFile(join(home, 'recordings'), 'not a folder');
    const pushed = next(core, 'settings:changed');
    await expect(core.handlers['settings:update']({ tunnel: { provider: 'localtunnel' } })).rejects.toThrow(
      /recordings folder/,
    );
    expect((await pushed).tunnel.provider).toBe('localtunnel');
  });
});
