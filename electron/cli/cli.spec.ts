/**
 * The `tally` commands driven in-process through main(), with captured streams, a real sandbox over
 * HTTP and a temporary TALLY_HOME. The keychain is replaced by its in-memory twin here; the real
 * Secret Service is exercised in tests/keychain.spec.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { readPackageVersion } from '../core/app/app-options.js';
import { MemorySecretStore, PROJECT_ACCOUNT } from '../core/credentials.js';
import type { ChannelJson } from '../core/model.js';
import { startSandbox } from '../core/sandbox/index.js';
import { confirmQuestion } from './end.js';
import type { CommandIo } from './command.js';

const SECRET = 'cli-S3cret-never-shown-4d2e';

class Capture extends PassThrough {
  text = '';
  constructor() {
    super();
    this.setEncoding('utf8');
    this.on('data', (chunk: string) => {
      this.text += chunk;
    });
  }
  /** Resolves once the captured text matches; driven by the stream's own data events. */
  until(pattern: RegExp): Promise<void> {
    if (pattern.test(this.text)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (pattern.test(this.text)) {
          this.off('data', check);
          resolve();
        }
      };
      this.on('data', check);
    });
  }
}

/** A stand-in for a terminal on stdin: isTTY plus a raw-mode switch whose calls are recorded. */
class FakeTty extends PassThrough {
  isTTY = true;
  rawModes: boolean[] = [];
  setRawMode(mode: boolean): this {
    this.rawModes.push(mode);
    return this;
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let sb: Awaited<ReturnType<typeof startSandbox>>;
let home: string;
let secrets: MemorySecretStore;

function baseEnv(over: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    TALLY_BASE_URL: sb.endpoints.baseUrl,
    TALLY_CONSOLE_API_URL: sb.endpoints.consoleApiUrl,
    TALLY_ADMIN_URL: sb.endpoints.adminUrl,
    TALLY_SERVICE_ID: sb.credentials.serviceId,
    TALLY_SECRET: SECRET,
    TALLY_HOME: home,
    TALLY_RETRIES: '0',
    ...over,
  };
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
  return env;
}

async function run(
  argv: string[],
  options: { env?: NodeJS.ProcessEnv; stdin?: PassThrough; input?: string; signal?: AbortSignal } = {},
): Promise<Run> {
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin = options.stdin ?? new PassThrough();
  if (options.input !== undefined) stdin.end(options.input);
  const io: CommandIo = {
    stdout,
    stderr,
    stdin,
    env: options.env ?? baseEnv(),
    secrets,
    signal: options.signal ?? new AbortController().signal,
  };
  const code = await main(argv, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}

function expectClean(result: Run): void {
  expect(result.stdout).not.toContain(SECRET);
  expect(result.stderr).not.toContain(SECRET);
}

beforeAll(async () => {
  sb = await startSandbox({ searchIndexDelayMs: 0, seed: 1, searchLimit: 1000, secret: SECRET });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'tally-cli-'));
  secrets = new MemorySecretStore();
});
afterEach(async () => {
  sb.control.setFaults('api', null);
  for (const b of sb.control.listBroadcasts({ state: 'live' })) await sb.control.endBroadcast(b.id);
  await rm(home, { recursive: true, force: true });
});

describe('tally with no command', () => {
  it('prints its help to stderr and exits 2, as a usage error; --help prints it to stdout and exits 0', async () => {
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^tally: live channels[\s\S]*Usage: tally <command> \[options\]/);
    const help = await run(['--help']);
    expect(help).toMatchObject({ code: 0, stdout: bare.stderr, stderr: '' });
  });

  it('--version and -v print the version the app reports too (About, app:info)', async () => {
    const version = readPackageVersion();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-v']) {
      expect(await run([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
  });
});

describe('tally live', () => {
  it('prints the empty state line', async () => {
    const result = await run(['live']);
    expect(result).toEqual({ code: 0, stdout: 'No channels are live right now.\n', stderr: '' });
  });

  it('prints an aligned table, newest first', async () => {
    sb.control.startBroadcast({ id: 'older', watchers: 12, createdAt: new Date(Date.now() - 5 * 60_000) });
    sb.control.startBroadcast({ id: 'newer-channel', watchers: 3 });
    const result = await run(['live']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+WATCHERS\s+STARTED$/);
    expect(lines[1]).toMatch(/^newer-channel\s+3\s+(just now|\d+ s ago)$/);
    expect(lines[2]).toMatch(/^older\s+12\s+5 min ago$/);
    expect(lines[3]).toBe('2 channels live.');
    // Columns line up: WATCHERS is right-aligned under its header.
    const end = (lines[0] ?? '').indexOf('WATCHERS') + 'WATCHERS'.length;
    expect(lines[1]?.slice(0, end).endsWith('3')).toBe(true);
    expect(lines[2]?.slice(0, end).endsWith('12')).toBe(true);
    expectClean(result);
  });

  it('prints normalised JSON with --json', async () => {
    sb.control.startBroadcast({ id: 'json-live', watchers: 7 });
    const result = await run(['live', '--json']);
    expect(result.code).toBe(0);
    const channels = JSON.parse(result.stdout) as ChannelJson[];
    expect(channels).toEqual([
      {
        id: 'json-live',
        serviceId: sb.credentials.serviceId,
        state: 'live',
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
        endedAt: null,
        durationSeconds: null,
        watchers: 7,
        cumulativeSessions: null,
      },
    ]);
  });

  it('refreshes with --watch until aborted', async () => {
    sb.control.startBroadcast({ id: 'watched', watchers: 1 });
    const controller = new AbortController();
    const stdout = new Capture();
    const io: CommandIo = {
      stdout,
      stderr: new Capture(),
      stdin: new PassThrough(),
      env: baseEnv(),
      secrets,
      signal: controller.signal,
    };
    const done = main(['live', '--watch', '--json', '--interval', '0.1'], io);
    await stdout.until(/(\[.*\]\n){2}/);
    controller.abort();
    expect(await done).toBe(0);
    const snapshots = stdout.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as ChannelJson[]);
    expect(snapshots.length).toBeGreaterThanOrEqual(2);
    expect(snapshots[0]?.[0]?.id).toBe('watched');
  });

  it('keeps watching through a transient error, reporting it on stderr', async () => {
    sb.control.setFaults('api', { status: 503, times: 1 });
    const controller = new AbortController();
    const stdout = new Capture();
    const stderr = new Capture();
    const done = main(['live', '--watch', '--json', '--interval', '0.1'], {
      stdout,
      stderr,
      stdin: new PassThrough(),
      env: baseEnv(),
      secrets,
      signal: controller.signal,
    });
    await stdout.until(/\[\]\n/);
    controller.abort();
    expect(await done).toBe(0);
    expect(stderr.text).toMatch(/^tally live: The service answered 503 .* Retrying in 0\.1 s\.\n$/);
  });

  it('rejects unknown options and misplaced ones with exit 2', async () => {
    const unknown = await run(['live', '--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^tally live: Unknown option '--bogus'/);
    expect(unknown.stderr).toContain('tally live --help');
    expect((await run(['live', '--interval', '3'])).code).toBe(2);
    expect((await run(['live', 'extra'])).code).toBe(2);
    expect((await run(['live', '--watch', '--interval', '0'])).code).toBe(2);
  });
});

describe('tally search', () => {
  beforeAll(() => {
    const now = Date.now();
    sb.control.addEndedChannels([
      { id: 'srch-10min', createdAt: new Date(now - 20 * 60_000), endedAt: new Date(now - 10 * 60_000), peerCount: 4 },
      { id: 'srch-2h', createdAt: new Date(now - 3 * 3_600_000), endedAt: new Date(now - 2 * 3_600_000), peerCount: 9 },
      {
        id: 'srch-3d',
        createdAt: new Date(now - 3 * 86_400_000),
        endedAt: new Date(now - 3 * 86_400_000 + 65_000),
        peerCount: 1,
      },
    ]);
  });

  it('defaults to the last 24 hours and prints a table with a total line', async () => {
    const result = await run(['search', '--keyword', 'srch-']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+CREATED\s+ENDED\s+DURATION\s+SESSIONS$/);
    expect(lines[1]).toMatch(
      /^srch-10min\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+10 min 00 s\s+4$/,
    );
    expect(lines[2]).toMatch(/^srch-2h\s.*\s1 h 00 min\s+9$/);
    expect(lines[3]).toMatch(/^2 channels between \d{4}-\d{2}-\d{2} \d{2}:\d{2} and \d{4}-\d{2}-\d{2} \d{2}:\d{2}\.$/);
    expect(result.stderr).toBe('');
  });

  it('reads relative times: 30m excludes what ended 2 h ago, 7d includes three days ago', async () => {
    const recent = await run(['search', '--since', '30m', '--keyword', 'srch-', '--json']);
    expect((JSON.parse(recent.stdout) as { channels: ChannelJson[] }).channels.map((c) => c.id)).toEqual([
      'srch-10min',
    ]);
    const week = await run(['search', '--since', '7d', '--keyword', 'srch-', '--json']);
    const body = JSON.parse(week.stdout) as { totalCount: number; truncated: boolean; channels: ChannelJson[] };
    expect(body.totalCount).toBe(3);
    expect(body.truncated).toBe(false);
    expect(body.channels.map((c) => c.id)).toEqual(['srch-10min', 'srch-2h', 'srch-3d']);
    expect(body.channels[2]).toMatchObject({
      state: 'ended',
      durationSeconds: 65,
      cumulativeSessions: 1,
      watchers: null,
    });
  });

  it('reads ISO times for both ends', async () => {
    const since = new Date(Date.now() - 4 * 3_600_000).toISOString();
    const until = new Date(Date.now() - 90 * 60_000).toISOString();
    const result = await run(['search', '--since', since, '--until', until, '--keyword', 'srch-', '--json']);
    expect((JSON.parse(result.stdout) as { channels: ChannelJson[] }).channels.map((c) => c.id)).toEqual(['srch-2h']);
  });

  it('limits the rows but still reports the total', async () => {
    const human = await run(['search', '--since', '7d', '--keyword', 'srch-', '--limit', '1']);
    expect(human.stdout).toMatch(/\nShowing 1 of 3 channels between /);
    const json = await run(['search', '--since', '7d', '--keyword', 'srch-', '--limit', '2', '--json']);
    const body = JSON.parse(json.stdout) as { totalCount: number; channels: unknown[] };
    expect(body.totalCount).toBe(3);
    expect(body.channels).toHaveLength(2);
  });

  it('prints a plain line when nothing matches', async () => {
    const result = await run(['search', '--keyword', 'nothing-matches-this']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^No channels between .*\.\n$/);
  });

  it('rejects unreadable times, reversed periods and bad limits with exit 2', async () => {
    const garbage = await run(['search', '--since', 'last tuesday']);
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toMatch(/^tally search: Cannot read --since "last tuesday": use a span like 30m/);
    expect((await run(['search', '--since', '1h', '--until', '2h'])).code).toBe(2);
    expect((await run(['search', '--since', '2024-02-30'])).code).toBe(2);
    for (const limit of ['0', '-1', '2.5', 'ten']) {
      expect((await run(['search', '--limit', limit])).code, limit).toBe(2);
    }
    // A negative number is the value it follows, judged by the command (not Node's "argument is ambiguous").
    const negative = await run(['search', '--limit', '-5']);
    expect(negative.code).toBe(2);
    expect(negative.stderr.split('\n')[0]).toBe('tally search: --limit must be a whole number of 1 or more.');
    const missing = await run(['search', '--limit', '--json']);
    expect(missing.stderr.split('\n')[0]).toBe(
      'tally search: --limit needs a value (one that starts with "-" is written --limit=VALUE).',
    );
    expect(`${negative.stderr}${missing.stderr}`).not.toMatch(/ambiguous|XYZ/);
  });
});

describe('tally end', () => {
  it('refuses without a terminal and without --yes (exit 2), leaving the channel live', async () => {
    sb.control.startBroadcast({ id: 'keep-me' });
    const result = await run(['end', 'keep-me']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/pass --yes/);
    expect(sb.control.listBroadcasts({ state: 'live' }).map((b) => b.id)).toContain('keep-me');
  });

  it('ends with --yes', async () => {
    sb.control.startBroadcast({ id: 'end-me' });
    const result = await run(['end', 'end-me', '--yes']);
    expect(result).toEqual({ code: 0, stdout: 'Ended end-me.\n', stderr: '' });
    expect(sb.control.listBroadcasts({ state: 'live' }).map((b) => b.id)).not.toContain('end-me');
    sb.control.startBroadcast({ id: 'end-json' });
    const json = await run(['end', '-y', 'end-json', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ id: 'end-json', ended: true });
  });

  it('asks on a terminal and ends only on yes', async () => {
    sb.control.startBroadcast({ id: 'ask-me' });
    const no = await run(['end', 'ask-me'], { stdin: ttyWith('n\n') });
    expect(no.code).toBe(1);
    expect(no.stderr).toBe(`${confirmQuestion('ask-me')}Cancelled: ask-me was not ended.\n`);
    expect(confirmQuestion('ask-me')).toBe('End channel ask-me now? Viewers will be disconnected. [y/N] ');
    expect(sb.control.listBroadcasts({ state: 'live' }).map((b) => b.id)).toContain('ask-me');
    const empty = await run(['end', 'ask-me'], { stdin: ttyWith('\n') });
    expect(empty.code).toBe(1);
    const yes = await run(['end', 'ask-me'], { stdin: ttyWith('yes\n') });
    expect(yes.code).toBe(0);
    expect(yes.stdout).toBe('Ended ask-me.\n');
  });

  it('reports an unknown channel on one line with exit 1', async () => {
    const result = await run(['end', 'ghost', '--yes']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('tally end: The service has no live channel with ID "ghost".\n');
  });

  it('needs exactly one channel ID', async () => {
    expect((await run(['end', '--yes'])).code).toBe(2);
    expect((await run(['end', 'a', 'b', '--yes'])).code).toBe(2);
  });
});

function ttyWith(input: string): FakeTty {
  const tty = new FakeTty();
  tty.write(input);
  return tty;
}

describe('errors and credentials', () => {
  it('reports wrong credentials on one line with exit 1 and never shows the secret', async () => {
    const result = await run(['live'], { env: baseEnv({ TALLY_SECRET: `${SECRET}-wrong` }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^tally live: The service rejected the service ID and secret\..*\n$/);
    expect(result.stderr.split('\n')).toHaveLength(2);
    expectClean(result);
  });

  it('reports an unreachable host on one line with exit 1', async () => {
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const result = await run(['live'], { env: baseEnv({ TALLY_BASE_URL: `http://127.0.0.1:${port}` }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `tally live: Could not reach the service for /lambda/broadcast-channel-list: connection refused by 127.0.0.1:${port}. Check the network connection and the host settings.\n`,
    );
  });

  it('explains what to do when there are no credentials at all', async () => {
    const result = await run(['live'], { env: baseEnv({ TALLY_SERVICE_ID: undefined, TALLY_SECRET: undefined }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/No credentials: run "tally login".*tally sandbox/);
  });

  it('lets flags override environment hosts', async () => {
    const result = await run(['live', '--base-url', sb.endpoints.baseUrl], {
      env: baseEnv({ TALLY_BASE_URL: 'http://127.0.0.1:9' }),
    });
    expect(result.code).toBe(0);
    expect((await run(['live', '--base-url', 'not a url'])).code).toBe(2);
  });

  it('reads hosts from the settings file in TALLY_HOME', async () => {
    const { openSettingsStore } = await import('../core/settings.js');
    openSettingsStore(home).update({ endpoints: { baseUrl: sb.endpoints.baseUrl } });
    const result = await run(['live'], { env: baseEnv({ TALLY_BASE_URL: undefined }) });
    expect(result).toMatchObject({ code: 0, stdout: 'No channels are live right now.\n' });
  });
});

describe('tally login and logout', () => {
  const noEnvCreds = () => baseEnv({ TALLY_SERVICE_ID: undefined, TALLY_SECRET: undefined });

  it('verifies and stores credentials read from stdin, which later commands use', async () => {
    const login = await run(['login', '--service-id', sb.credentials.serviceId, '--secret-stdin'], {
      env: noEnvCreds(),
      input: `${SECRET}\n`,
    });
    expect(login.code).toBe(0);
    expect(login.stdout).toBe(
      `Logged in as ${sb.credentials.serviceId}: 0 channels live now. The credentials are stored in the OS keychain.\n`,
    );
    expectClean(login);
    expect(JSON.parse((await secrets.get(PROJECT_ACCOUNT)) ?? '{}')).toEqual({
      serviceId: sb.credentials.serviceId,
      secret: SECRET,
    });
    sb.control.startBroadcast({ id: 'after-login', watchers: 2 });
    const live = await run(['live'], { env: noEnvCreds() });
    expect(live.code).toBe(0);
    expect(live.stdout).toMatch(/^after-login\s+2\s/m);
    // A different service ID than the stored one is refused rather than sent with the wrong secret.
    const other = await run(['live', '--service-id', 'someone-else'], { env: noEnvCreds() });
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/holds credentials for service ID/);

    const logout = await run(['logout'], { env: noEnvCreds() });
    expect(logout).toEqual({
      code: 0,
      stdout: `Removed the stored credentials for ${sb.credentials.serviceId} from the OS keychain.\n`,
      stderr: '',
    });
    expect(await secrets.get(PROJECT_ACCOUNT)).toBeNull();
    expect((await run(['logout'], { env: noEnvCreds() })).stdout).toBe(
      'No credentials were stored in the OS keychain.\n',
    );
  });

  it('stores nothing when the service rejects the secret', async () => {
    const login = await run(['login', '--service-id', sb.credentials.serviceId], {
      env: noEnvCreds(),
      input: 'not-the-secret',
    });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/rejected the service ID and secret.*\nNothing was stored\.\n$/s);
    expect(await secrets.get(PROJECT_ACCOUNT)).toBeNull();
  });

  it('stores without checking with --no-verify', async () => {
    const login = await run(['login', '--service-id', 'offline-svc', '--no-verify'], {
      env: baseEnv({ TALLY_SERVICE_ID: undefined, TALLY_SECRET: undefined, TALLY_BASE_URL: 'http://127.0.0.1:9' }),
      input: 'offline-secret',
    });
    expect(login.code).toBe(0);
    expect(login.stdout).toMatch(/^Logged in as offline-svc \(not verified\)\./);
    expect(JSON.parse((await secrets.get(PROJECT_ACCOUNT)) ?? '{}')).toEqual({
      serviceId: 'offline-svc',
      secret: 'offline-secret',
    });
  });

  it('prompts on a terminal and reads the secret without echo', async () => {
    const tty = new FakeTty();
    const stdout = new Capture();
    const stderr = new Capture();
    const done = main(['login'], {
      stdout,
      stderr,
      stdin: tty,
      env: noEnvCreds(),
      secrets,
      signal: new AbortController().signal,
    });
    await stderr.until(/Service ID: $/);
    tty.write(`${sb.credentials.serviceId}\n`);
    await stderr.until(/Secret \(typing is hidden\): $/);
    // Typed key by key, with a typo fixed by Backspace.
    for (const ch of `${SECRET}X\u007f\r`) tty.write(ch);
    expect(await done).toBe(0);
    expect(tty.rawModes).toEqual([true, false]);
    expect(stdout.text).toMatch(/^Logged in as /);
    expect(stdout.text + stderr.text).not.toContain(SECRET);
    expect(JSON.parse((await secrets.get(PROJECT_ACCOUNT)) ?? '{}')).toMatchObject({ secret: SECRET });
  });

  it('needs a service ID when stdin is not a terminal', async () => {
    const result = await run(['login'], { env: noEnvCreds(), input: 'x' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--service-id/);
    expect((await run(['login', '--service-id', 's'], { env: noEnvCreds(), input: '\n' })).code).toBe(2);
  });
});

describe('help', () => {
  it('every command has a full help text with examples', async () => {
    for (const name of ['live', 'search', 'end', 'login', 'logout']) {
      const result = await run([name, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: tally ${name}`));
      expect(result.stdout).toMatch(/\nExamples:\n {2}tally /);
      expect((await run(['help', name])).stdout).toBe(result.stdout);
    }
  });
});
