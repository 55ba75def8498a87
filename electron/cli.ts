#!/usr/bin/env node
/**
 * `tally`: the headless face of the same core the tray app uses. Sub-commands live in electron/cli/ and
 * are imported only when run, so `tally --help` prints without loading HTTP or keychain modules.
 */
import type { Command, CommandIo } from './cli/command.js';

const COMMANDS: Record<string, { summary: string; load: () => Promise<{ default: Command }> }> = {
  live: { summary: 'List channels that are live now', load: () => import('./cli/live.js') },
  search: { summary: 'Search past channels by time range and keyword', load: () => import('./cli/search.js') },
  end: { summary: 'Force-end a live channel', load: () => import('./cli/end.js') },
  login: { summary: 'Store the service ID and secret in the OS keychain', load: () => import('./cli/login.js') },
  logout: { summary: 'Remove stored credentials from the OS keychain', load: () => import('./cli/logout.js') },
  listen: { summary: 'Receive recording webhooks and download every recording', load: () => import('./cli/listen.js') },
  status: {
    summary: 'Show whether recordings are safe (exit 0 ok, 1 warning, 2 error, 3 nothing runs)',
    load: () => import('./cli/status.js'),
  },
  doctor: {
    summary: 'Print a redacted report to paste into a bug report',
    load: () => import('./cli/doctor.js'),
  },
  retry: { summary: 'Try a waiting, failed or gone recording again now', load: () => import('./cli/retry.js') },
  follow: { summary: 'Mirror every recording of a studio (studio mode)', load: () => import('./cli/follow.js') },
  sandbox: { summary: 'Run the local emulator of the service', load: () => import('./cli/sandbox.js') },
  serve: { summary: 'Serve the popover UI in a browser over the headless core', load: () => import('./cli/serve.js') },
};

/** Every command's name (tests hold a table over all of them). */
export const COMMAND_NAMES = Object.keys(COMMANDS);

export const MAIN_HELP = `tally: live channels, search, force-end and never-lost recordings, from the terminal.

Usage: tally <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(9)}${c.summary}`)
  .join('\n')}

Global options:
  --json         Print machine-readable JSON instead of tables (where a command prints data)
  -h, --help     Show help for tally or for a command
  -v, --version  Print the version

Credentials come from TALLY_SERVICE_ID / TALLY_SECRET or from the keychain (tally login).
Hosts: TALLY_BASE_URL, TALLY_CONSOLE_API_URL, TALLY_ADMIN_URL. State folder: TALLY_HOME.
Run "tally <command> --help" for the options of a command.
`;

/** Runs the CLI; returns the exit code. Exported so tests can drive it in-process. */
export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  // `tally` alone is a usage error (exit 2), as a command without its arguments is: the help goes to stderr.
  if (!name) {
    io.stderr.write(MAIN_HELP);
    return 2;
  }
  if (name === '-h' || name === '--help' || name === 'help') {
    if (name === 'help' && rest[0] && COMMANDS[rest[0]]) return main([rest[0], '--help'], io);
    io.stdout.write(MAIN_HELP);
    return 0;
  }
  if (name === '-v' || name === '--version') {
    // The nearest package.json named tally, from the sources or the build alike: the version the app reports.
    const { readPackageVersion } = await import('./core/app/app-options.js');
    io.stdout.write(`${readPackageVersion()}\n`);
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) {
    io.stderr.write(`tally: unknown command "${name}". Run "tally --help" for the list.\n`);
    return 2;
  }
  const command = (await entry.load()).default;
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(command.help);
    return 0;
  }
  const { UsageError } = await import('./cli/command.js');
  const { closeCommandLog, currentCommandLog, LOGGED_COMMANDS, takeLogFlags } = await import('./cli/command-log.js');
  const { checkDataFolder, dataFolderError } = await import('./cli/home-check.js');
  let why = 'finished';
  try {
    // Every command keeps or reads state there: a folder it cannot use is said first, in one line.
    await checkDataFolder(io.env);
    // The log level flags belong to the log file (cli/command-log.ts), not to the command's own options.
    const args = LOGGED_COMMANDS.has(name) ? takeLogFlags(rest) : rest;
    const code = await command.run(args, io);
    if (io.signal.aborted) why = stopReason(io.signal.reason);
    return code;
  } catch (thrown) {
    // A folder that became unusable later (a disk remounted read-only) is said the same way.
    const error = dataFolderError(thrown, io.env) ?? thrown;
    if (error instanceof UsageError) {
      why = 'usage error';
      io.stderr.write(`tally ${name}: ${error.message}\nRun "tally ${name} --help" for usage.\n`);
      return 2;
    }
    const { formatError } = await import('./cli/output.js');
    why = `error: ${formatError(error)}`;
    io.stderr.write(`tally ${name}: ${formatError(error)}\n`);
    // The log of a long-running command keeps why it stopped, with the stack.
    currentCommandLog()?.fileOnly.error(
      `stopped: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    return 1;
  } finally {
    await closeCommandLog(why);
  }
}

/** Why the process was asked to stop, as bin/tally.js says it (`SIGINT`, `SIGTERM`, the reader went away…). */
function stopReason(reason: unknown): string {
  return typeof reason === 'string' ? reason : 'asked to stop';
}
