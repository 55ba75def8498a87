/**
 * `tally doctor`: one redacted report a producer can paste into a bug report, the same text as Settings →
 * Advanced → Copy diagnostics (core/app/diagnostics.ts): versions, OS, the data folder, the health of every
 * Tally running on it (asked over the control socket, as `tally status` does), the journal's counts, the
 * settings and the last lines of each log. Every secret in use (environment, keychain, state-folder files, and
 * whatever this process registered: core/redact.ts) is blanked out.
 */
import {
  crashFacts,
  diagnosticsText,
  journalCounts,
  keychainSecrets,
  recentLogs,
  secretsInEnv,
  stateFolderSecrets,
} from '../core/app/diagnostics.js';
import { readPackageVersion } from '../core/app/app-options.js';
import { LOG_NAMES } from '../core/log-file.js';
import { demoStateDir } from '../core/app/demo.js';
import { appDataDir } from '../core/paths.js';
import { listRunning } from '../core/receive/control.js';
import type { Command, CommandIo } from './command.js';
import { loadSettings } from './settings.js';
import { openCredentialStore } from './keychain.js';
import { parseCommandArgs } from './arguments.js';

const help = `Usage: tally doctor

Print a report for a bug report: the versions of Tally, Node and the OS, the data folder (TALLY_HOME), the
health of the Tally running on it (the tray app, "tally serve" or "tally listen"), how many recordings the
journal holds in each state, the tray app's crashes and the crash dumps kept on this computer, the settings,
and the last lines of each log. Secrets (the project secret, team and ngrok tokens, passwords in URLs) are
replaced by [redacted]; read it before you send it.

Options:
  -h, --help   Show this help

Examples:
  tally doctor > tally-report.txt
`;

const FACE = { app: 'the tray app', serve: 'tally serve', listen: 'tally listen', follow: 'tally follow' } as const;

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    parseCommandArgs(argv, {});
    const home = appDataDir(io.env);
    const { settings, store } = loadSettings(io);
    const running = await listRunning(home);
    const text = diagnosticsText({
      madeBy: 'tally doctor',
      version: readPackageVersion(),
      home,
      settings,
      settingsWarnings: store.warnings,
      health: running.map((r) => ({
        who: `${FACE[r.info.face]} (process ${r.info.pid})`,
        health: 'health' in r ? r.health : null,
        ...('error' in r ? { error: r.error } : {}),
      })),
      journal: await journalCounts(home),
      demoJournal: await journalCounts(demoStateDir(home)),
      logs: await recentLogs(home, LOG_NAMES),
      crashes: crashFacts(home),
      secrets: [
        ...secretsInEnv(io.env),
        ...(await keychainSecrets(openCredentialStore(io))),
        ...(await stateFolderSecrets(home)),
      ],
    });
    io.stdout.write(text);
    return 0;
  },
};

export default command;
