/**
 * `tally follow`: a studio member. Mirrors every recording the studio's receiver shares into a folder, verified
 * and byte-identical, until Ctrl+C / SIGTERM. Needs no service credentials, only the team server's.
 */
import { hostname } from 'node:os';
import { appDataDir, expandFolderFlag } from '../core/paths.js';
import { MemberService } from '../core/receive/member-service.js';
import type { Command, CommandIo } from './command.js';
import { openCommandLog } from './command-log.js';
import { UsageError } from './command.js';
import { loadSettings } from './settings.js';
import { openCredentialStore } from './keychain.js';
import { parseCommandArgs } from './arguments.js';
import { createStudioPrinter } from './studio-output.js';
import { coalescingWriter, createListenPrinter } from './listen-output.js';

const help = `Usage: tally follow --team nats://HOST:PORT [--folder DIR] [options]

Mirror every recording of a studio into DIR, verified and byte-identical. The studio's receiver
("tally listen --team ...") puts each saved recording in the team store and announces it; this computer
picks it up, now or later: a member that was stopped, asleep or killed resumes unfinished transfers and
catches up on what was shared meanwhile (the team server keeps recordings 7 days by default), and never
makes a second copy of a recording it already has. Recordings that expired from the team server while
this member was away are named once ("missed") and keep the health at a warning for a day. No service
credentials are needed here.

Options:
  --team <url>       The team's NATS server: nats://HOST:PORT, or tls://HOST:PORT for TLS (required);
                     a cluster's servers separated by commas
  --folder <dir>     Where recordings go (default: the recordingsFolder setting); ~ is your home folder
  --name <name>      This member's name on the team server (default: this computer's name), shown in the
                     receiver's view. The server remembers your place by an ID kept in TALLY_HOME for this
                     name and folder: two members of the same name each get every recording.
  --max-rate <n>     Most bytes per second this member downloads (k, M suffixes: 2M), to leave bandwidth
                     for a live broadcast; recordings then come one at a time (default: no limit, small
                     recordings three at a time)
  --ndjson           One JSON object per line: ready, health, waiting, progress, saved, failed, connection,
                     warning, missed, stopping, stopped
  --log-level <l>    How much <data>/logs/follow.N.log holds: debug, info, warn or error (default: the
                     logLevel setting, info)
  --debug            The same as --log-level debug
  -h, --help         Show this help

Team credentials (when the server asks for them): TALLY_TEAM_USER + TALLY_TEAM_PASSWORD, or
TALLY_TEAM_TOKEN, or the keychain entry stored by "tally login --team URL". Recordings the receiver keeps in
an S3 bucket are read with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and TALLY_S3_ENDPOINT (or
AWS_ENDPOINT_URL) for S3-compatible servers. While the team server cannot be reached, one line says so and
Tally tries again with growing pauses.

Examples:
  tally follow --team nats://studio.local:4222 --folder ~/Videos/Studio
  tally follow --team tls://nats.example.com:4222 --folder ./studio --name edit-bay-2 --ndjson
`;

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { values } = parseCommandArgs(argv, {
      team: { type: 'string' },
      folder: { type: 'string' },
      name: { type: 'string' },
      'max-rate': { type: 'string' },
      ndjson: { type: 'boolean' },
    });
    const rate = values['max-rate'] === undefined ? undefined : parseRate(values['max-rate']);
    if (values.team === undefined) throw new UsageError('--team is required, e.g. --team nats://studio.local:4222.');
    const name = (values.name ?? hostname()).trim();
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) {
      throw new UsageError('--name must be 1 to 64 letters, digits, dots, dashes or underscores.');
    }
    const { settings } = loadSettings(io);
    const folder = values.folder === undefined ? settings.recordingsFolder : expandFolderFlag(values.folder);
    const log = await openCommandLog(io, 'follow', settings.logLevel);
    let member: MemberService;
    try {
      // The one member service (as the app's): team URLs, credentials, S3, the follower, the health, tally status.
      member = new MemberService({
        face: 'follow',
        home: appDataDir(io.env),
        team: values.team,
        folder,
        name,
        env: io.env,
        keychain: keychainOrNull(io),
        clientSubfolder: settings.clientUploadsSubfolder,
        ...(rate ? { rateBytesPerSec: rate } : {}),
        log,
        // The core's event trail (mirror events, health changes) goes to the log file; the printer only prints.
        trail: log.trail.child('follow'),
        ...(io.env.TALLY_TEAM_RETRY_MS
          ? { tuning: { retry: { baseDelayMs: Number(io.env.TALLY_TEAM_RETRY_MS) } } }
          : {}),
      });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }

    // Each turn's lines in one write (Node writes to a pipe synchronously: three lines per recording were 4 % of a
    // member's CPU in a burst of short clips; issue 22), the health lines in the same order as the others.
    const out = coalescingWriter(io.stdout);
    const printer = createStudioPrinter({
      out,
      err: io.stderr,
      ndjson: values.ndjson === true,
      prefix: 'tally follow',
    });
    // The member's one event stream, printed; its health (team link, mirror, disk) as `health` lines.
    const healthPrinter = createListenPrinter({ out, ndjson: values.ndjson === true, tty: false, folder });
    member.on('ready', (info) => printer.ready(info));
    member.on('waiting', (info) => printer.waiting(info));
    member.on('connection', (state) => printer.connection(state));
    member.on('progress', (p) => printer.progress(p));
    member.on('saved', (e) => printer.saved(e));
    member.on('failed', (info) => printer.failed(info));
    member.on('warning', (w) => printer.warning(w));
    member.on('missed', (recordings) => printer.missed(recordings));
    member.on('health', (view, previous) => healthPrinter.health(view, previous));

    const stopOnSignal = () => void member.stop();
    io.signal.addEventListener('abort', stopOnSignal, { once: true });
    try {
      await member.start();
      if (!io.signal.aborted)
        await new Promise<void>((done) => io.signal.addEventListener('abort', () => done(), { once: true }));
      printer.stopping();
    } catch (error) {
      // Ctrl+C while the server was still unreachable is a normal stop, not an error.
      if (!io.signal.aborted) throw error;
      printer.stopping();
    } finally {
      io.signal.removeEventListener('abort', stopOnSignal);
      await member.stop();
      out.flush();
    }
    printer.stopped();
    out.flush();
    return 0;
  },
};

/** `500000`, `500k`, `2M` → bytes per second; at least 16 kB/s. */
function parseRate(input: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(input.trim());
  const factor = { '': 1, k: 1_000, m: 1_000_000 }[(match?.[2] ?? '').toLowerCase() as '' | 'k' | 'm'];
  const rate = match ? Math.round(Number(match[1]) * factor) : NaN;
  if (!Number.isFinite(rate) || rate < 16_000) {
    throw new UsageError('--max-rate must be bytes per second, 16k or more (e.g. 500k, 2M).');
  }
  return rate;
}

function keychainOrNull(io: Pick<CommandIo, 'secrets'>) {
  try {
    return openCredentialStore(io);
  } catch {
    return null;
  }
}

export default command;
