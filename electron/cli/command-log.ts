/**
 * The log file of the long-running commands (`serve`, `listen`, `follow`): every line they write to stderr
 * as `tally <name>: …` also goes to <data>/logs/<name>.N.log (core/log-file.ts: rotated, secrets redacted),
 * so a producer running Tally headless has a log to send too. The file that is open is the one the crash
 * handlers (cli/crash.ts) write to.
 */
import { describeError, type Logger } from '../core/logger.js';
import type { FileLog, LogName } from '../core/log-file.js';
import { appDataDir } from '../core/paths.js';
import { secretsInEnv } from '../core/redact.js';
import type { CommandIo } from './command.js';

export interface CommandLog extends Logger {
  /** Writes a line to stderr (`tally <name>: line`) and to the log file, as a warning. */
  (line: string): void;
  /** Closes the file (the command is done). */
  close(): Promise<void>;
}

let current: FileLog | null = null;

/** The log file of the command that is running, for the crash handlers (null before one is open). */
export function currentCommandLog(): FileLog | null {
  return current;
}

/** Opens the command's log file; a folder that cannot be written costs the file, never the command. */
export async function openCommandLog(io: CommandIo, name: LogName): Promise<CommandLog> {
  const echo = (line: string) => io.stderr.write(`tally ${name}: ${line}\n`);
  // Loaded here, not at start-up: the short commands (live, search…) never pay for the logger.
  const { openLogFile } = await import('../core/log-file.js');
  const secrets = () => secretsInEnv(io.env);
  const file = await openLogFile({ home: appDataDir(io.env), name, echo, secrets }).catch((error: unknown) => {
    echo(`warning: no log file (${describeError(error)}); lines go to this terminal only.`);
    return null;
  });
  if (file) {
    current = file;
    file.fileOnly.info(`tally ${name} started (pid ${process.pid}, Node ${process.version}, ${process.platform})`);
  }
  const log = ((line: string) => (file ? file.warn(line) : echo(line))) as CommandLog;
  log.warn = log;
  log.close = async () => {
    if (current === file) current = null;
    await file?.close();
  };
  closeCurrent = log.close;
  return log;
}

let closeCurrent: (() => Promise<void>) | null = null;

/** Closes the log file of the command that ran (cli.ts calls it when a command returns or throws). */
export async function closeCommandLog(): Promise<void> {
  const close = closeCurrent;
  closeCurrent = null;
  await close?.();
}
