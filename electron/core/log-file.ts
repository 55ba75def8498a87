/**
 * The log a producer can send: one file per face (`app`, `serve`, `listen`, `follow`) in the `logs` folder of
 * the app's data folder, rotated by size, secrets redacted before a line is written.
 *
 * Built on pino (Signal-Desktop logs the same way): JSON lines that tools read and `tally doctor` quotes,
 * written in-process to a file that rolls over by size (rolling-file.ts) rather than through a worker-thread
 * transport, so nothing has to be unpacked from the app's archive and a line is on disk when the call returns
 * (writes are synchronous: a handful of lines a minute, and the last line before a crash is the one that
 * matters).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino, type Logger as Pino } from 'pino';
import type { Logger, LogLevel } from './logger.js';
import { redactSecrets } from './redact.js';
import { RollingFile, logFileNumber } from './rolling-file.js';

/** The faces that keep a log, each in its own files (two may run at once on one data folder). */
export type LogName = 'app' | 'serve' | 'listen' | 'follow' | 'sandbox';

/** Every face's log, in the order reports quote them. */
export const LOG_NAMES: readonly LogName[] = ['app', 'serve', 'listen', 'follow', 'sandbox'];

/** Rotate at 2 MiB, keep 4 older files: about 10 MiB at most per face. */
const ROTATE_BYTES = 2 * 1024 * 1024;
const KEEP_FILES = 4;

/** Where the logs of the data folder `home` are written. */
export function logFolder(home: string): string {
  return join(home, 'logs');
}

/** A log file's logger: the core's levelled `Logger`, with what only the faces need. */
export interface FileLog extends Logger {
  /** A logger whose lines name where they come from (`{"scope":"tray"}`; nested: `receive/downloads`). */
  scope(name: string): FileLog;
  child(name: string): FileLog;
  /** The level now: lines below it are not written (info unless the face was asked for more). */
  readonly level: LogLevel;
  /** Changes the level of this file and every logger of it (the logLevel setting changed). */
  setLevel(level: LogLevel): void;
  /** The same log without the echo: for what belongs in the file only (a stack, a crash report). */
  readonly fileOnly: FileLog;
  /** The folder the files are in (the current file is the highest-numbered `<name>.<n>.log`). */
  readonly folder: string;
}

export interface OpenLogOptions {
  /** The app's data folder (the logs go in its `logs` folder). */
  home: string;
  name: LogName;
  /** Also gets every line, unredacted: the terminal of the producer who started the command. */
  echo?: (line: string) => void;
  /** Secrets in use, hidden wherever they appear (asked at each line: a new login applies at once). */
  secrets?: () => readonly string[];
  /** Tests: rotate at this size, in bytes. */
  rotateBytes?: number;
  /** Lines below this level are not written (default info: the event trail, warnings and errors). */
  level?: LogLevel;
}

/** Opens (creating the folder) the rotating log file of `name` under `home`. */
export async function openLogFile(options: OpenLogOptions): Promise<FileLog & { close(): Promise<void> }> {
  const folder = logFolder(options.home);
  const stream = new RollingFile({
    folder,
    name: options.name,
    maxBytes: options.rotateBytes ?? ROTATE_BYTES,
    keep: KEEP_FILES,
  });
  const secrets = options.secrets ?? (() => []);
  const root = pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Objects logged with a line (none today) lose their secret-named fields too.
      redact: { paths: ['secret', 'token', 'password', '*.secret', '*.token', '*.password'], censor: '[redacted]' },
      hooks: {
        // Redaction at the logger: whoever wrote the line, the file never holds a secret.
        logMethod(args, method) {
          const redacted = args.map((arg) => (typeof arg === 'string' ? redactSecrets(arg, secrets()) : arg));
          method.apply(this, redacted as Parameters<typeof method>);
        },
      },
    },
    stream,
  );
  // One pino child per scope, made from the root (a child of a child would repeat the scope key), each told
  // when the level changes (a child keeps the level it was made with).
  const children = new Map<string, Pino>();
  const pinoFor = (scope: string): Pino => {
    let child = children.get(scope);
    if (!child) children.set(scope, (child = root.child({ scope })));
    return child;
  };
  const wrap = (logger: Pino, scope: string | null, echo: boolean): FileLog => {
    const say = (level: LogLevel) => (line: string) => {
      // The echo (the producer's terminal) shows what the file would hold, at the same level.
      if (echo && logger.isLevelEnabled(level)) options.echo?.(line);
      logger[level](line);
    };
    const scoped = (name: string) => {
      const full = scope ? `${scope}/${name}` : name;
      return wrap(pinoFor(full), full, echo);
    };
    return {
      debug: say('debug'),
      info: say('info'),
      warn: say('warn'),
      error: say('error'),
      scope: scoped,
      child: scoped,
      get level() {
        return root.level as LogLevel;
      },
      setLevel: (level) => {
        root.level = level;
        for (const child of children.values()) child.level = level;
      },
      get fileOnly() {
        return wrap(logger, scope, false);
      },
      folder,
    };
  };
  // Assigned, not spread: `level` and `fileOnly` are getters.
  return Object.assign(wrap(root, null, true), {
    close: () => {
      stream.close();
      return Promise.resolve();
    },
  });
}

/** One line of a log file as a person reads it: `time level [scope] message`. */
export function formatLogLine(json: string): string {
  try {
    const entry = JSON.parse(json) as { time?: string; level?: number; scope?: string; msg?: string };
    const level = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' }[entry.level ?? 30];
    return `${entry.time ?? '?'} ${level ?? entry.level} ${entry.scope ? `[${entry.scope}] ` : ''}${entry.msg ?? ''}`;
  } catch {
    return json;
  }
}

/**
 * The last `count` lines of the logs of `name` under `home`, oldest first, formatted for a person (the
 * current file and, when it is short, the one before it). Empty when there is no log yet.
 */
export async function lastLogLines(home: string, name: LogName, count: number): Promise<string[]> {
  const folder = logFolder(home);
  const files = await readdir(folder).catch(() => [] as string[]);
  const numbered = files
    .map((file) => ({ file, n: logFileNumber(file, name) ?? NaN }))
    .filter((f) => Number.isInteger(f.n))
    .sort((a, b) => b.n - a.n);
  const lines: string[] = [];
  for (const { file } of numbered) {
    const text = await readFile(join(folder, file), 'utf8').catch(() => '');
    lines.unshift(...text.split('\n').filter((line) => line.trim() !== ''));
    if (lines.length >= count) break;
  }
  return lines.slice(-count).map(formatLogLine);
}
