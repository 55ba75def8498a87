import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { captureIo, firstLine } from '../../tests/support/cli/io.js';
import { parseSandboxArgs } from './sandbox.js';

describe('tally sandbox', () => {
  it('prints one JSON line with endpoints and credentials, serves until aborted, then exits 0', async () => {
    const controller = new AbortController();
    const { io, stdout } = captureIo(controller.signal);
    const line = firstLine(stdout);
    const exit = main(['sandbox', '--json', '--seed', '3', '--service-id', 'svc', '--secret', 's3cret', '--quiet'], io);
    const ready = JSON.parse(await line) as Record<string, unknown> & { env: Record<string, string> };
    expect(ready).toMatchObject({
      apiUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      downloadOrigin: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      serviceId: 'svc',
      secret: 's3cret',
    });
    expect(ready.env).toEqual({
      TALLY_BASE_URL: ready.apiUrl,
      TALLY_CONSOLE_API_URL: `${ready.apiUrl as string}/console`,
      TALLY_ADMIN_URL: `${ready.apiUrl as string}/admin`,
      TALLY_SERVICE_ID: 'svc',
      TALLY_SECRET: 's3cret',
      TALLY_DOWNLOAD_ORIGINS: ready.downloadOrigin,
    });
    const live = await fetch(`${ready.env.TALLY_BASE_URL}/lambda/broadcast-channel-list`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ serviceId: 'svc', secret: 's3cret' }),
    });
    expect(await live.json()).toEqual([]);
    controller.abort();
    expect(await exit).toBe(0);
    await expect(fetch(`${ready.apiUrl as string}/_sandbox`)).rejects.toThrow();
  });

  it('prints export lines and events in human mode', async () => {
    const controller = new AbortController();
    const { io, stdout, out } = captureIo(controller.signal);
    const printed = new Promise<void>((resolve) => {
      stdout.on('data', () => {
        if (out().includes('Press Ctrl+C to stop.')) resolve();
      });
    });
    const exit = main(['sandbox', '--secret', "it's"], io);
    await printed;
    expect(out()).toMatch(/^export TALLY_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out()).toMatch(/^export TALLY_DOWNLOAD_ORIGINS=http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out()).toContain(`export TALLY_SECRET='it'\\''s'`);
    const apiUrl = /^export TALLY_BASE_URL=(.+)$/m.exec(out())?.[1] as string;
    const event = new Promise<void>((resolve) =>
      stdout.on('data', () => out().includes('live      ev-1') && resolve()),
    );
    await fetch(`${apiUrl}/_sandbox/broadcasts`, { method: 'POST', body: JSON.stringify({ id: 'ev-1' }) });
    await event;
    controller.abort();
    expect(await exit).toBe(0);
  });

  it('exits 2 with a message on bad flags', async () => {
    for (const argv of [
      ['--nope'],
      ['--port', 'x'],
      ['--port', '70000'],
      ['--time-factor', '0'],
      ['--webhook-shape', 'xml'],
      ['--webhook-url', 'ftp://x'],
      ['extra'],
    ]) {
      const { io, err } = captureIo(new AbortController().signal);
      expect(await main(['sandbox', ...argv], io), argv.join(' ')).toBe(2);
      expect(err()).toMatch(/^tally sandbox: .+\nRun "tally sandbox --help" for usage\.\n$/);
    }
  });

  it('has a help text naming every flag', async () => {
    const { io, out } = captureIo(new AbortController().signal);
    expect(await main(['sandbox', '--help'], io)).toBe(0);
    for (const flag of [
      '--port',
      '--download-port',
      '--host',
      '--demo',
      '--time-factor',
      '--webhook-url',
      '--webhook-shape',
      '--service-id',
      '--secret',
      '--seed',
      '--json',
    ]) {
      expect(out()).toContain(flag);
    }
  });

  it('maps flags to sandbox options', () => {
    expect(
      parseSandboxArgs([
        '--port=4010',
        '--download-port',
        '4011',
        '--host',
        '0.0.0.0',
        '--demo',
        '--time-factor',
        '2.5',
        '--webhook-url',
        'http://127.0.0.1:9/hook',
        '--webhook-shape',
        'spec',
        '--seed',
        '8',
      ]),
    ).toEqual({
      options: {
        port: 4010,
        downloadPort: 4011,
        host: '0.0.0.0',
        demo: true,
        timeFactor: 2.5,
        webhookUrl: 'http://127.0.0.1:9/hook',
        webhookShape: 'spec',
        seed: 8,
      },
      json: false,
      quiet: false,
      run: [],
    });
  });

  it('takes a command to run after "--", and nothing else outside its flags', () => {
    expect(parseSandboxArgs(['--quiet', '--', 'tally', 'live', '--json']).run).toEqual(['tally', 'live', '--json']);
    expect(() => parseSandboxArgs(['--'])).toThrow('"--" must be followed by the command to run');
    expect(() => parseSandboxArgs(['tally'])).toThrow('a command to run goes after "--"');
  });
});

describe('ports already taken', () => {
  it.each([
    ['sandbox', ['sandbox', '--quiet']],
    ['serve', ['serve', '--sandbox', '--no-open']],
  ])('tally %s on a busy port says which port and which flag, in one line', async (name, argv) => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const home = await mkdtemp(join(tmpdir(), 'tally-port-'));
    try {
      const { io, err } = captureIo(new AbortController().signal, { TALLY_HOME: home });
      expect(await main([...argv, '--port', String(port)], io)).toBe(1);
      // The holder is this test's own process, where the OS says (it is then "this Tally").
      const what = name === 'sandbox' ? 'the API' : 'the page';
      expect(err().trimEnd().split('\n').at(-1)).toMatch(
        new RegExp(
          `^tally ${name}: Port ${port} for ${what} (is taken by this Tally|is already in use by another program): choose another with --port <port>, or leave --port out for a free one\\.$`,
        ),
      );
    } finally {
      busy.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
