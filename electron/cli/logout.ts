/** `tally logout`: removes the stored credentials (and, with --all, the other tokens) from the OS keychain. */
import { forgetTeamLogin, TEAM_LOGIN_TOKEN } from '../core/receive/team-login.js';
import type { Command, CommandIo } from './command.js';
import { openCredentialResolver, openCredentialStore } from './keychain.js';
import { parseCommandArgs } from './arguments.js';

const help = `Usage: tally logout [options]

Remove the service ID and secret stored by "tally login" from the OS keychain.

Options:
  --all               Also remove the other tokens Tally keeps there (the ngrok authtoken, the team
                      server's credentials)
  --team              Remove only the team server's credentials (stored by "tally login --team")
  -h, --help          Show this help

Examples:
  tally logout
  tally logout --all
`;

/** Tokens removed by `--all`. */
const TOKENS = ['ngrok', TEAM_LOGIN_TOKEN] as const;

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { values } = parseCommandArgs(argv, { all: { type: 'boolean' }, team: { type: 'boolean' } });
    const store = openCredentialStore(io);
    if (values.team) {
      const gone = await forgetTeamLogin(store);
      io.stdout.write(
        gone ? 'Removed the team credentials from the OS keychain.\n' : 'No team credentials were stored.\n',
      );
      return 0;
    }
    let stored: string | null = null;
    try {
      stored = (await store.stored())?.serviceId ?? null;
    } catch {
      // Damaged entry: it is removed below all the same.
    }
    const removed = await store.clear();
    await openCredentialResolver(io).forget();
    if (removed) {
      io.stdout.write(`Removed the stored credentials${stored ? ` for ${stored}` : ''} from the OS keychain.\n`);
    } else {
      io.stdout.write('No credentials were stored in the OS keychain.\n');
    }
    if (values.all) {
      for (const name of TOKENS) {
        if (await store.deleteToken(name)) io.stdout.write(`Removed the ${name} token.\n`);
      }
    }
    if (io.env.TALLY_SERVICE_ID || io.env.TALLY_SECRET) {
      io.stderr.write('Note: TALLY_SERVICE_ID / TALLY_SECRET are still set in this environment and will be used.\n');
    }
    return 0;
  },
};

export default command;
