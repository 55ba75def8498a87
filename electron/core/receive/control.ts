/**
 * How `tally status` and `tally retry` reach the Tally that runs on this TALLY_HOME (the tray app, `tally serve`
 * or `tally listen`): each running receive service answers on a local socket that only this user can open
 * (a Unix socket in `<home>/run/`, mode 0600 in a 0700 folder; a named pipe on Windows), and leaves a small
 * JSON file beside it saying which face it is. A file whose holder does not take a connection on its socket is
 * stale and is removed, with a note: its PID may belong to another program by now (run-files.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { HealthView } from '../health-view.js';
import { describeError } from '../logger.js';
import { nodeHttp } from '../node-http.js';

import { knock, readRunFiles, removeRunFile, runDir, type Face, type RunInfo } from '../run-files.js';

export type { Face, RunInfo } from '../run-files.js';

/** The health a running Tally answers with: checked for its shape before anything reads it. */
const HealthAnswerSchema = z
  .object({
    state: z.enum(['ok', 'warning', 'error']),
    summary: z.string().max(4096),
    components: z
      .array(
        z
          .object({
            id: z.string().max(32),
            state: z.enum(['ok', 'warning', 'error']),
            reason: z.string().max(4096),
            action: z.string().max(4096).nullable(),
          })
          .passthrough(),
      )
      .max(32),
    receiver: z
      .object({ host: z.string().max(256), port: z.number().nullable(), configuredPort: z.number() })
      .passthrough(),
    problems: z.number().int().min(0),
  })
  .passthrough();

const RetryAnswerSchema = z
  .object({
    keys: z.array(z.string().max(256)).max(10_000),
    /** The channel of each key, in the same order (absent from a Tally older than this field). */
    channels: z.array(z.string().max(4096).nullable()).max(10_000).optional(),
  })
  .strict();

/** A recording `tally retry` tried again: its key, and its channel ID (what a producer knows it by). */
export interface RetriedRecording {
  key: string;
  channelId: string | null;
}

export interface ControlHandlers {
  health(): HealthView;
  /** Retries now the recordings of a channel ID or a recording key; answers the keys it retried. */
  retry(target: string): Promise<string[]>;
  /** The channel ID of a recording key, for the answer `tally retry` prints. */
  channelOf?(key: string): string | null;
}

const MAX_UNIX_SOCKET_PATH = 100;

function socketPathFor(home: string, id: string): string {
  if (process.platform === 'win32') {
    const hash = createHash('sha256').update(home).digest('hex').slice(0, 16);
    return `\\\\?\\pipe\\tally-${hash}-${id}`;
  }
  const inHome = join(runDir(home), `${id}.sock`);
  if (Buffer.byteLength(inHome) <= MAX_UNIX_SOCKET_PATH) return inHome;
  // A long TALLY_HOME would overflow the socket address: a short name in the temp folder, named in the run file.
  const hash = createHash('sha256').update(home).digest('hex').slice(0, 16);
  return join(tmpdir(), `tally-${hash}-${id}.sock`);
}

/** The local control socket of one running receive service. */
export class ControlServer {
  readonly #server: Server;
  readonly #infoPath: string;
  readonly #socket: string;

  private constructor(server: Server, infoPath: string, socket: string) {
    this.#server = server;
    this.#infoPath = infoPath;
    this.#socket = socket;
  }

  /** Listens and announces itself in `<home>/run/`. */
  static async open(home: string, face: Face, handlers: ControlHandlers): Promise<ControlServer> {
    const dir = runDir(home);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700).catch(() => undefined);
    const id = `${process.pid}-${randomBytes(3).toString('hex')}`;
    const socket = socketPathFor(home, id);
    const server = nodeHttp().createServer((req, res) => void answer(req, res, handlers));
    await rm(socket, { force: true }).catch(() => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', () => undefined);
    if (process.platform !== 'win32') await chmod(socket, 0o600).catch(() => undefined);
    const info: RunInfo = { pid: process.pid, face, startedAt: new Date().toISOString(), socket };
    const infoPath = join(dir, `${id}.json`);
    await writeFile(infoPath, `${JSON.stringify(info)}\n`, { mode: 0o600 });
    return new ControlServer(server, infoPath, socket);
  }

  async close(): Promise<void> {
    await rm(this.#infoPath, { force: true }).catch(() => undefined);
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (process.platform !== 'win32') await rm(this.#socket, { force: true }).catch(() => undefined);
  }
}

async function answer(req: IncomingMessage, res: ServerResponse, handlers: ControlHandlers): Promise<void> {
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  try {
    const url = new URL(req.url ?? '/', 'http://control.invalid');
    if (req.method === 'GET' && url.pathname === '/health') return send(200, handlers.health());
    if (req.method === 'POST' && url.pathname === '/retry') {
      const target = url.searchParams.get('target') ?? '';
      if (target.length === 0 || target.length > 4096) return send(400, { error: 'target is required' });
      const keys = await handlers.retry(target);
      return send(200, { keys, channels: keys.map((key) => handlers.channelOf?.(key) ?? null) });
    }
    send(404, { error: 'unknown request' });
  } catch (error) {
    send(500, { error: describeError(error) });
  }
}

function ask(socket: string, method: 'GET' | 'POST', path: string, timeoutMs = 3000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = nodeHttp().request({ socketPath: socket, method, path, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > 1024 * 1024) req.destroy(new Error('answer too large'));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        try {
          const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if (res.statusCode !== 200) {
            reject(new Error(String((body as { error?: unknown }).error ?? `status ${res.statusCode}`)));
          } else resolve(body);
        } catch (error) {
          reject(error as Error);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A running Tally and its health, or why it did not answer. */
export type Running = { info: RunInfo; health: HealthView } | { info: RunInfo; error: string };

/** A run file found stale and removed: whose it was and why (one line, for the note the face prints). */
export interface StaleRun {
  info: RunInfo;
  why: string;
}

/**
 * Every Tally running on this home, asked for its health. A run file whose holder does not take a connection
 * on its control socket is stale: it is removed and handed to `onStale` (the PID may now be another program's,
 * which is never named as a Tally that does not answer). A holder that takes the connection and then does not
 * answer is listed with the error: it runs, hung.
 */
export async function listRunning(
  home: string,
  onStale: (stale: StaleRun) => void = () => undefined,
): Promise<Running[]> {
  const found: Running[] = [];
  for (const { path, info } of await readRunFiles(home)) {
    const verdict = alive(info.pid) ? await knock(info.socket) : 'dead';
    if (verdict === 'dead' || verdict === 'gone') {
      await removeRunFile(path, info);
      const why =
        verdict === 'dead'
          ? `process ${info.pid} has ended`
          : `nothing answers on its control socket, so process ${info.pid} is another program now`;
      onStale({ info, why });
      continue;
    }
    try {
      const health = HealthAnswerSchema.parse(await ask(info.socket, 'GET', '/health')) as unknown as HealthView;
      found.push({ info, health });
    } catch (error) {
      found.push({ info, error: describeError(error) });
    }
  }
  return found;
}

/** Asks one running Tally to retry a channel's recordings (or one recording key) now. */
export async function askRetry(info: RunInfo, target: string): Promise<RetriedRecording[]> {
  const answer = await ask(info.socket, 'POST', `/retry?target=${encodeURIComponent(target)}`, 10_000);
  const { keys, channels } = RetryAnswerSchema.parse(answer);
  return keys.map((key, i) => ({ key, channelId: channels?.[i] ?? null }));
}
