/** `tally login`: checks the service ID and secret against the service, then stores them in the OS keychain. */
import { ConfigError, TallyError } from '../core/errors.js';
import { ngrokTokenPath, writeNgrokTokenFile } from '../core/ngrok-token-file.js';
import { appDataDir } from '../core/paths.js';
import type { Command, CommandIo } from './command.js';
import { UsageError } from './command.js';
import { CONNECTION_OPTIONS, connectionFlags, parseCommandArgs } from './arguments.js';
import { createApi } from './service-client.js';
import { endpointsFor, loadSettings } from './settings.js';
import { isTty, readAll, readHidden, readLine } from './prompts.js';
import { openCredentialResolver, openCredentialStore } from './keychain.js';
import { formatError } from './output.js';
import { saveTeamLogin, teamLoginUrl } from '../core/receive/team-login.js';

const help = `Usage: tally login [options]

Store the project's service ID and secret (console: Project Information) in the OS keychain
(Keychain on macOS, Credential Manager on Windows, the Secret Service on Linux). They are checked
against the service first. The secret is never echoed, written to a file or printed. It is bound to the
three service hosts in use now (flags, environment, settings): if they change later, Tally does not send it
to the new ones until you run "tally login" again.

On a terminal you are asked for both; the secret is typed without echo. When stdin is not a terminal
(or with --secret-stdin) the secret is read from stdin and --service-id (or TALLY_SERVICE_ID) is needed.

With --ngrok, stores an ngrok authtoken instead (used by "tally listen --tunnel ngrok" and the app),
read the same way: hidden prompt on a terminal, or stdin. Where no OS keychain can be used (a server
without a Secret Service), it goes to the file "ngrok-authtoken" in Tally's state folder, readable by you
only; TALLY_NGROK_AUTHTOKEN is the other way to hand it over.

With --team URL, stores the credentials of a studio's NATS server instead (used by "tally listen --team"
and "tally follow"): with --user, the password is read (hidden prompt or stdin); without, a token. They
are sent only to that server.

Options:
  --ngrok             Store the ngrok authtoken instead of the project credentials
  --team <url>        Store the team server's credentials instead (nats://HOST:PORT or tls://HOST:PORT)
  --user <name>       With --team: the NATS user (the password is read); without it a token is read
  --service-id <id>   Service ID (asked for on a terminal when missing)
  --secret-stdin      Read the secret from stdin instead of prompting
  --no-verify         Store without checking against the service
  --base-url <url>    Signalling host used for the check (TALLY_BASE_URL)
  -h, --help          Show this help

Examples:
  tally login
  tally login --service-id my-service-id
  printf '%s' "$SECRET" | tally login --service-id my-service-id --secret-stdin
  tally login --service-id my-service-id --no-verify < secret.txt
  printf '%s' "$NGROK_AUTHTOKEN" | tally login --ngrok
  tally login --team tls://nats.example.com:4222 --user edit-bay
`;

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { values } = parseCommandArgs(argv, {
      ...CONNECTION_OPTIONS,
      'secret-stdin': { type: 'boolean' },
      'no-verify': { type: 'boolean' },
      ngrok: { type: 'boolean' },
      team: { type: 'string' },
      user: { type: 'string' },
    });
    const flags = connectionFlags(values);
    const terminal = isTty(io.stdin);
    const secretFromStdin = values['secret-stdin'] === true || !terminal;

    if (values.team !== undefined) {
      if (values.ngrok === true || flags.serviceId) throw new UsageError('--team stores only the team credentials.');
      return loginTeam(values.team, values.user, secretFromStdin, io);
    }
    if (values.user !== undefined) throw new UsageError('--user needs --team.');

    if (values.ngrok === true) {
      if (flags.serviceId) throw new UsageError('--ngrok stores only the ngrok authtoken: drop --service-id.');
      const token = secretFromStdin
        ? stripLineBreak(await readAll(io))
        : (await readHidden(io, 'ngrok authtoken (typing is hidden): ')).trim();
      if (!token || /\s/.test(token)) throw new UsageError('The ngrok authtoken must be one word with no spaces.');
      try {
        await openCredentialStore(io).setToken('ngrok', token);
        io.stdout.write('The ngrok authtoken is stored in the OS keychain.\n');
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        // No keychain here (a server without a Secret Service): the documented fallback, a file only you can read.
        const home = appDataDir(io.env);
        await writeNgrokTokenFile(home, token);
        io.stdout.write(
          `No OS keychain here (${error.message.replace(/\.$/, '')}).\n` +
            `The ngrok authtoken is stored in ${ngrokTokenPath(home)}, readable by you only.\n`,
        );
      }
      return 0;
    }

    let serviceId = flags.serviceId ?? '';
    if (!serviceId) {
      if (terminal) {
        io.stderr.write('Service ID: ');
        serviceId = ((await readLine(io)) ?? '').trim();
      } else {
        serviceId = io.env.TALLY_SERVICE_ID?.trim() ?? '';
      }
    }
    if (!serviceId) {
      throw new UsageError(
        terminal ? 'A service ID is needed.' : 'stdin is not a terminal: pass --service-id (or set TALLY_SERVICE_ID).',
      );
    }

    const secret = secretFromStdin
      ? stripLineBreak(await readAll(io))
      : (await readHidden(io, 'Secret (typing is hidden): ')).trim();
    if (!secret) throw new UsageError(secretFromStdin ? 'No secret on stdin.' : 'The secret is empty.');
    if (/[\r\n]/.test(secret)) throw new UsageError('The secret must be a single line.');

    const credentials = { serviceId, secret };
    // The secret is bound to the hosts it is entered for here; other hosts never receive it.
    const endpoints = endpointsFor(io, flags, loadSettings(io).settings);
    let liveCount: number | null = null;
    if (values['no-verify'] !== true) {
      const api = createApi(io, endpoints, credentials);
      try {
        liveCount = (await api.testConnection()).liveCount;
      } catch (error) {
        if (!(error instanceof TallyError)) throw error;
        io.stderr.write(`tally login: ${formatError(error)}\nNothing was stored.`);
        io.stderr.write(error.code === 'bad_credentials' ? '\n' : ' Use --no-verify to store without checking.\n');
        return 1;
      }
    }

    const resolver = openCredentialResolver(io);
    await openCredentialStore(io).save(credentials);
    await resolver.bind(endpoints);
    const check =
      liveCount === null ? ' (not verified)' : `: ${liveCount} ${liveCount === 1 ? 'channel' : 'channels'} live now`;
    io.stdout.write(`Logged in as ${serviceId}${check}. The credentials are stored in the OS keychain.\n`);
    if (io.env.TALLY_SERVICE_ID || io.env.TALLY_SECRET) {
      io.stderr.write('Note: TALLY_SERVICE_ID / TALLY_SECRET are set and take precedence over the keychain.\n');
    }
    return 0;
  },
};

/** `tally login --team URL [--user NAME]`: the password or token from a hidden prompt or stdin, into the keychain. */
async function loginTeam(team: string, user: string | undefined, fromStdin: boolean, io: CommandIo): Promise<number> {
  let url: URL;
  try {
    url = teamLoginUrl(team);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const what = user === undefined ? 'token' : `password for ${user}`;
  const secret = fromStdin
    ? stripLineBreak(await readAll(io))
    : (await readHidden(io, `Team ${what} (typing is hidden): `)).trim();
  if (!secret) throw new UsageError(`The team ${what} is empty.`);
  if (/[\r\n]/.test(secret)) throw new UsageError(`The team ${what} must be a single line.`);
  const creds = user === undefined ? { token: secret } : { user: user.trim(), password: secret };
  if (user !== undefined && !user.trim()) throw new UsageError('--user needs a name.');
  const server = await saveTeamLogin(openCredentialStore(io), url, creds);
  io.stdout.write(`The team credentials for ${server} are stored in the OS keychain.\n`);
  return 0;
}

/** A piped secret usually ends with one line break that is not part of it. */
function stripLineBreak(text: string): string {
  return text.replace(/\r?\n$/, '').trim();
}

export default command;
