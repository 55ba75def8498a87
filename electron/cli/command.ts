/** The shape every `tally` sub-command module exports. Commands are imported lazily to keep start-up fast. */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); long-running commands await it. */
  signal: AbortSignal;
}

export interface Command {
  /** Full `--help` text of the command. */
  help: string;
  /** Runs the command; resolves to the exit code (0 ok, 1 service/network error, 2 usage). */
  run(argv: string[], io: CommandIo): Promise<number>;
}

/** A usage error: exit code 2 with the message and a pointer to `--help`. */
export class UsageError extends Error {
  override name = 'UsageError';
}
