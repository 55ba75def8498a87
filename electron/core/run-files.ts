/**
 * The run files of the Tallies running on one TALLY_HOME (`<home>/run/<pid>-<id>.json`, each naming the control
 * socket its process answers on), and the one liveness test every reader uses: ask the socket. A PID alone
 * proves nothing (issue 30, finding 8): after a crash it is reused by another program, which then made
 * `tally status` say "process N does not answer" and a stale receiver lock blame the innocent process. A Unix
 * socket has a listener only while the process that opened it lives, so a socket that refuses the connection
 * (or is gone) means its holder is gone, whatever now runs under the PID.
 */
import { connect } from 'node:net';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

export type Face = 'app' | 'serve' | 'listen' | 'follow';

/** What a running Tally says about itself in `<home>/run/<id>.json`. */
export const RunInfoSchema = z
  .object({
    pid: z.number().int().positive(),
    face: z.enum(['app', 'serve', 'listen', 'follow']),
    startedAt: z.string().max(64),
    socket: z.string().min(1).max(1024),
  })
  .strict();
export type RunInfo = z.infer<typeof RunInfoSchema>;

export function runDir(home: string): string {
  return join(home, 'run');
}

/** The run files of `home` that parse, with their paths. */
export async function readRunFiles(home: string): Promise<{ path: string; info: RunInfo }[]> {
  const dir = runDir(home);
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')).sort();
  const found: { path: string; info: RunInfo }[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const parsed = RunInfoSchema.safeParse(
      await readFile(path, 'utf8')
        .then((t) => JSON.parse(t) as unknown)
        .catch(() => null),
    );
    if (parsed.success) found.push({ path, info: parsed.data });
  }
  return found;
}

/**
 * Whether a process listens on control socket `socket`: `listening` (it took the connection), `gone` (nothing
 * listens there: refused, or no such socket), or `silent` (no verdict within `timeoutMs`: a listener too busy or
 * stopped to accept; treat it as alive).
 */
export function knock(socket: string, timeoutMs = 2_000): Promise<'listening' | 'gone' | 'silent'> {
  return new Promise((resolve) => {
    const conn = connect(socket);
    const done = (verdict: 'listening' | 'gone' | 'silent'): void => {
      clearTimeout(timer);
      conn.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => done('silent'), timeoutMs);
    conn.once('connect', () => done('listening'));
    conn.once('error', (error: NodeJS.ErrnoException) => {
      const gone = ['ECONNREFUSED', 'ENOENT', 'ENOTSOCK', 'ENOTDIR'].includes(error.code ?? '');
      done(gone ? 'gone' : 'silent');
    });
  });
}

/** Removes a stale run file and its socket (best effort). */
export async function removeRunFile(path: string, info: RunInfo): Promise<void> {
  await rm(path, { force: true }).catch(() => undefined);
  if (process.platform !== 'win32' && info.socket.endsWith('.sock')) {
    await rm(info.socket, { force: true }).catch(() => undefined);
  }
}
