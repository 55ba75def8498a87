/**
 * The log file of the long-running commands (`serve`, `listen`, `follow`, `sandbox`): every line they write to
 * stderr as `tally <name>: …` also goes to <data>/logs/<name>.N.log (core/log-file.ts: rotated, secrets
 * redacted), and the core's event trail (`trail`: started, webhooks, download attempts, saves, health changes,
 * stopped and why) goes to the file only, so a producer running Tally headless has a log to send too. The file
 * that is open is the one the crash handlers (cli/crash.ts) write to.
 *
 * The level is info unless asked: `--debug` or `--log-level <level>` on the command line (cli.ts takes them
 * off before the command parses its own flags), else the logLevel setting.
 */
import { describeError, isLogLevel, lineLogger, silentLogger, type Logger, type LogLevel } from '../core/logger.js';
import type { FileLog, LogName } from '../core/log-file.js';
import { appDataDir } from '../core/paths.js';
import { secretsInEnv } from '../core/redact.js';
import type { CommandIo } from './command.js';
import { UsageError } from './command.js';

export interface CommandLog extends Logger {
  /** Writes a line to stderr (`tally <name>: line`) and to the log file, as a warning. */
  (line: string): void;
  /** The event trail: the file only (the terminal shows what the command prints), at the log's level. */
  readonly trail: Logger;
  /** The logLevel setting is now `level`: followed unless `--debug` / `--log-level` said otherwise. */
  followSetting(level: LogLevel): void;
  /** Closes the file (the command is done). */
  close(): Promise<void>;
}

/** The commands that keep a log file, and so take `--debug` / `--log-level`. */
export const LOGGED_COMMANDS: ReadonlySet<string> = new Set<LogName>(['serve', 'listen', 'follow', 'sandbox']);

let current: FileLog | null = null;
let requestedLevel: LogLevel | null = null;

/** The log file of the command that is running, for the crash handlers (null before one is open). */
export function currentCommandLog(): FileLog | null {
  return current;
}

/**
 * Takes `--debug` and `--log-level <level>` (or `--log-level=<level>`) out of a logged command's arguments and
 * remembers the level for its log file; returns the rest. Throws a UsageError for an unknown level.
 */
export function takeLogFlags(argv: readonly string[]): string[] {
  const rest: string[] = [];
  requestedLevel = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === '--debug') {
      requestedLevel = 'debug';
      continue;
    }
    const inline = arg.startsWith('--log-level=') ? arg.slice('--log-level='.length) : null;
    if (arg !== '--log-level' && inline === null) {
      rest.push(arg);
      continue;
    }
    const value = inline ?? argv[++i];
    if (!isLogLevel(value)) throw new UsageError('--log-level must be debug, info, warn or error.');
    requestedLevel = value;
  }
  return rest;
}

/**
 * Opens the command's log file at the level asked on the command line, else `setting` (the logLevel setting);
 * a folder that cannot be written costs the file, never the command.
 */
export async function openCommandLog(io: CommandIo, name: LogName, setting?: LogLevel): Promise<CommandLog> {
  const echo = (line: string) => io.stderr.write(`tally ${name}: ${line}\n`);
  // Loaded here, not at start-up: the short commands (live, search…) never pay for the logger.
  const { openLogFile } = await import('../core/log-file.js');
  const secrets = () => secretsInEnv(io.env);
  const level = requestedLevel ?? setting ?? 'info';
  const file = await openLogFile({ home: appDataDir(io.env), name, echo, secrets, level }).catch((error: unknown) => {
    echo(`warning: no log file (${describeError(error)}); lines go to this terminal only.`);
    return null;
  });
  if (file) {
    current = file;
    file.fileOnly.info(
      `tally ${name} started (pid ${process.pid}, Node ${process.version}, ${process.platform}, log level ${level})`,
    );
  }
  const warn = (line: string) => (file ? file.warn(line) : echo(line));
  const fallback = lineLogger(echo);
  const log = Object.assign(warn, {
    debug: (line: string) => file?.debug(line),
    info: (line: string) => (file ? file.info(line) : undefined),
    warn,
    error: (line: string) => (file ? file.error(line) : echo(line)),
    child: (scope: string) => (file ? file.child(scope) : fallback),
    trail: file ? file.fileOnly : silentLogger,
    followSetting: (setting: LogLevel) => {
      if (requestedLevel === null && file && file.level !== setting) {
        file.setLevel(setting);
        file.fileOnly.info(`log level ${setting} (the logLevel setting)`);
      }
    },
    close: async () => {
      if (current === file) current = null;
      await file?.close();
    },
  }) as CommandLog;
  closeCurrent = (why: string) => {
    file?.fileOnly.info(`tally ${name} stopped (${why})`);
    return log.close();
  };
  return log;
}

let closeCurrent: ((why: string) => Promise<void>) | null = null;

/**
 * Says why the command stopped (`SIGINT`, `SIGTERM`, `error: …`, `finished`) and closes its log file (cli.ts
 * calls it when a command returns or throws).
 */
export async function closeCommandLog(why = 'finished'): Promise<void> {
  const close = closeCurrent;
  closeCurrent = null;
  await close?.(why);
}
