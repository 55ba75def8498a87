/**
 * `tally sandbox`: runs the local emulator of the service until interrupted, and prints what another shell
 * (or a script, with --json) needs to point tally at it.
 */
import { constants } from 'node:os';
import { parseArgs } from 'node:util';
import type { Sandbox, SandboxOptions, WebhookShape } from '../core/sandbox/index.js';
import { appDataDir } from '../core/paths.js';
import { explainListenError, UsageError, type Command, type CommandIo } from './command.js';
import { clockTime } from './output.js';
import { openCommandLog } from './command-log.js';

const help = `Usage: tally sandbox [options]

Runs a local emulator of the service: the live list, search, force-end and admin endpoints on one port,
an S3-like download host for recordings on another, and the recording webhook. Runs until Ctrl+C.

Options:
  --port N                API port (service, admin and control endpoints). Default: any free port
  --download-port N       Download host port. Default: any free port
  --host H                Address to listen on. Default: 127.0.0.1 (the control API answers loopback only)
  --demo                  Keep a few broadcasts going on their own: they start and end, most are recorded
  --time-factor F         Run durations F times faster (retention, search delay, demo lengths). Default: 1
  --webhook-url URL       Send the recording webhook to URL (same as the admin API recordhook call)
  --webhook-shape SHAPE   json (current docs), get (older docs) or spec (wrapped body). Default: json
  --service-id S          Service ID the sandbox accepts. Default: sandbox-service
  --secret S              Secret the sandbox accepts. Default: sandbox-secret
  --seed N                Seed for IDs, sizes and watcher counts (same seed, same run). Default: random
  --json                  Print one JSON line with the endpoints and credentials first, then one JSON
                          line per event
  --quiet                 Do not print events (broadcasts, recordings, webhooks)
  --log-level <level>     How much <data>/logs/sandbox.N.log holds: debug, info (default), warn or error
  --debug                 The same as --log-level debug
  -h, --help              Show this help

The sandbox credentials are not a real project's: printing them is fine. Control API (curl-friendly):
GET /_sandbox/broadcasts, POST /_sandbox/broadcasts, POST /_sandbox/broadcasts/<id>/end,
PUT /_sandbox/faults/<api|download>, PUT /_sandbox/speed ... (see docs/sandbox.md).

With a command after "--", runs it with the sandbox's variables exported (the lines "export ..." above)
and stops the sandbox when it ends, with its exit code: for scripts and one-off tries.

Examples:
  tally sandbox --demo --time-factor 60
  tally sandbox --quiet -- tally live
  tally sandbox --quiet -- sh -c 'tally live --json && tally search --since 1h'
`;

const SHAPES: readonly WebhookShape[] = ['json', 'get', 'spec'];

function intFlag(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

/** Turns the command line into sandbox options; throws UsageError on anything it cannot use. */
export function parseSandboxArgs(argv: string[]): {
  options: SandboxOptions;
  json: boolean;
  quiet: boolean;
  /** The command given after `--`, run with the sandbox's variables (empty: run until Ctrl+C). */
  run: string[];
} {
  const dashes = argv.indexOf('--');
  const run = dashes === -1 ? [] : argv.slice(dashes + 1);
  if (dashes !== -1 && run.length === 0) throw new UsageError('"--" must be followed by the command to run');
  argv = dashes === -1 ? argv : argv.slice(0, dashes);
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        'download-port': { type: 'string' },
        host: { type: 'string' },
        demo: { type: 'boolean' },
        'time-factor': { type: 'string' },
        'webhook-url': { type: 'string' },
        'webhook-shape': { type: 'string' },
        'service-id': { type: 'string' },
        secret: { type: 'string' },
        seed: { type: 'string' },
        json: { type: 'boolean' },
        quiet: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (positionals.length > 0) {
    throw new UsageError(`Unexpected argument "${positionals[0]}": a command to run goes after "--"`);
  }
  const options: SandboxOptions = { demo: values.demo ?? false };
  const portValue = intFlag(values.port, '--port', 0, 65535);
  if (portValue !== undefined) options.port = portValue;
  const downloadPort = intFlag(values['download-port'], '--download-port', 0, 65535);
  if (downloadPort !== undefined) options.downloadPort = downloadPort;
  const seed = intFlag(values.seed, '--seed', 0, 2 ** 32 - 1);
  if (seed !== undefined) options.seed = seed;
  if (values.host !== undefined) {
    if (!values.host.trim()) throw new UsageError('--host must not be empty');
    options.host = values.host;
  }
  if (values['time-factor'] !== undefined) {
    const f = Number(values['time-factor']);
    if (!values['time-factor'].trim() || !Number.isFinite(f) || f <= 0) {
      throw new UsageError(`--time-factor must be a number above 0, got "${values['time-factor']}"`);
    }
    options.timeFactor = f;
  }
  if (values['webhook-url'] !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(values['webhook-url']);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new UsageError('--webhook-url must be an absolute http(s) URL');
    }
    options.webhookUrl = values['webhook-url'];
  }
  if (values['webhook-shape'] !== undefined) {
    const shape = values['webhook-shape'] as WebhookShape;
    if (!SHAPES.includes(shape)) throw new UsageError(`--webhook-shape must be one of ${SHAPES.join(', ')}`);
    options.webhookShape = shape;
  }
  for (const flag of ['service-id', 'secret'] as const) {
    if (values[flag] !== undefined && values[flag] === '') throw new UsageError(`--${flag} must not be empty`);
  }
  if (values['service-id'] !== undefined) options.serviceId = values['service-id'];
  if (values.secret !== undefined) options.secret = values.secret;
  return { options, json: values.json ?? false, quiet: values.quiet ?? false, run };
}

/** The environment another `tally` needs to talk to this sandbox. */
export function sandboxEnv(sandbox: Sandbox): Record<string, string> {
  return {
    TALLY_BASE_URL: sandbox.endpoints.baseUrl,
    TALLY_CONSOLE_API_URL: sandbox.endpoints.consoleApiUrl,
    TALLY_ADMIN_URL: sandbox.endpoints.adminUrl,
    TALLY_SERVICE_ID: sandbox.credentials.serviceId,
    TALLY_SECRET: sandbox.credentials.secret,
    TALLY_DOWNLOAD_ORIGINS: sandbox.downloadOrigin,
  };
}

/** Single-quotes a value for POSIX shells when it holds anything beyond plain URL characters. */
function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `argv` (no shell) with the sandbox's variables added to the environment, its output passed through;
 * resolves with its exit code (128 + signal number when a signal ended it, 127 when it could not start).
 */
async function runWithSandbox(argv: string[], env: Record<string, string>, io: CommandIo): Promise<number> {
  const { spawn } = await import('node:child_process');
  const [file, ...args] = argv as [string, ...string[]];
  const child = spawn(file, args, { env: { ...io.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(io.stdout, { end: false });
  child.stderr.pipe(io.stderr, { end: false });
  const stop = () => child.kill('SIGTERM');
  io.signal.addEventListener('abort', stop, { once: true });
  try {
    return await new Promise<number>((resolve) => {
      child.on('error', (error) => {
        io.stderr.write(`tally sandbox: could not run "${file}": ${error.message}\n`);
        resolve(127);
      });
      child.on('close', (code, signal) => {
        resolve(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0));
      });
    });
  } finally {
    io.signal.removeEventListener('abort', stop);
  }
}

function printHuman(io: CommandIo, sandbox: Sandbox, env: Record<string, string>): void {
  const rows: Array<[string, string]> = [
    ['API', sandbox.apiUrl],
    ['Console API', sandbox.endpoints.consoleApiUrl],
    ['Admin API', sandbox.endpoints.adminUrl],
    ['Downloads', sandbox.downloadOrigin],
    ['Control API', `${sandbox.apiUrl}/_sandbox/`],
    ['Service ID', sandbox.credentials.serviceId],
    ['Secret', `${sandbox.credentials.secret}  (sandbox only, not a real project's)`],
  ];
  const lines = [
    'Tally sandbox is running.',
    ...rows.map(([k, v]) => `  ${k.padEnd(12)} ${v}`),
    '',
    'Point tally at it from another shell:',
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    '',
    'Press Ctrl+C to stop.',
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

/** Prints sandbox events as they happen: a JSON line each with --json, a short sentence otherwise. */
function followEvents(io: CommandIo, sandbox: Sandbox, json: boolean): void {
  const { events } = sandbox.control;
  const out = (event: string, data: Record<string, unknown>, text: string) => {
    io.stdout.write(json ? `${JSON.stringify({ event, ...data })}\n` : `${clockTime()} ${text}\n`);
  };
  const started = (b: { id: string; record: boolean }) =>
    out('broadcast:start', { id: b.id, record: b.record }, `live      ${b.id}${b.record ? ' (recorded)' : ''}`);
  // Demo broadcasts that started with the sandbox came before this listener.
  for (const b of sandbox.control.listBroadcasts({ state: 'live' })) started(b);
  events.on('broadcast:start', started);
  events.on('broadcast:end', (b: { id: string }) => out('broadcast:end', { id: b.id }, `ended     ${b.id}`));
  events.on('recording', (r: { channelId: string; url: string; size: number }) =>
    out('recording', { channelId: r.channelId, url: r.url, size: r.size }, `recording ${r.url} (${r.size} bytes)`),
  );
  events.on('recording:expired', (r: { channelId: string }) =>
    out('recording:expired', { channelId: r.channelId }, `expired   recording of ${r.channelId}`),
  );
  events.on(
    'webhook',
    (d: { channelId: string; url: string; shape: string; status: number | null; error: string | null }) =>
      out(
        'webhook',
        { channelId: d.channelId, url: d.url, shape: d.shape, status: d.status, error: d.error },
        `webhook   ${d.shape} ${d.url} -> ${d.status ?? d.error}`,
      ),
  );
}

const command: Command = {
  help,
  async run(argv, io) {
    const { options, json, quiet, run } = parseSandboxArgs(argv);
    const { startSandbox } = await import('../core/sandbox/index.js');
    const sandbox = await startSandbox(options).catch(async (error: unknown) => {
      const port = (error as { port?: unknown })?.port;
      const download = port === options.downloadPort && port !== options.port;
      const flag = download ? '--download-port' : '--port';
      const what = { home: appDataDir(io.env), what: download ? 'the download host' : 'the API' };
      // Loaded only for this error: the sandbox alone never reads run files or /proc.
      const { explainTakenPort } = await import('./taken-port.js');
      throw explainListenError(await explainTakenPort(error, flag, what), () => flag);
    });
    // The sandbox's events go to its log file too (<data>/logs/sandbox.N.log), whatever --quiet says.
    const log = await openCommandLog(io, 'sandbox');
    const { traceSandbox } = await import('../core/sandbox/sandbox-trail.js');
    traceSandbox(sandbox, log.trail);
    log.trail.info(`sandbox service at ${sandbox.apiUrl} (time ${sandbox.control.timeFactor}x faster)`);
    try {
      const env = sandboxEnv(sandbox);
      if (json) {
        const ready = {
          apiUrl: sandbox.apiUrl,
          ...sandbox.endpoints,
          downloadOrigin: sandbox.downloadOrigin,
          controlUrl: `${sandbox.apiUrl}/_sandbox`,
          serviceId: sandbox.credentials.serviceId,
          secret: sandbox.credentials.secret,
          env,
        };
        io.stdout.write(`${JSON.stringify(ready)}\n`);
      } else if (run.length === 0) {
        // With a command to run, its own output is what the producer reads.
        printHuman(io, sandbox, env);
      }
      if (!quiet) followEvents(io, sandbox, json);
      if (run.length > 0) return await runWithSandbox(run, env, io);
      await new Promise<void>((resolve) => {
        if (io.signal.aborted) resolve();
        else io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      await sandbox.close();
    }
    return 0;
  },
};

export default command;
