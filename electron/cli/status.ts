/**
 * `tally status`: the health of the Tally running on this TALLY_HOME (the tray app, `tally serve` or
 * `tally listen`), asked over its local control socket (core/receive/control.ts). The exit code is the health:
 * 0 ok, 1 warning, 2 error, 3 nothing running, so scripts and monitors can act on it.
 */
import { problemRecordingText, type HealthState, type HealthView } from '../contract.js';
import { counted } from '../core/counted.js';
import { appDataDir } from '../core/paths.js';
import { listRunning, type Running } from '../core/receive/control.js';
import type { Command, CommandIo } from './command.js';
import { parseCommandArgs } from './arguments.js';
import { clockTime, terminalSafe } from './output.js';

const help = `Usage: tally status [--json]

Show the health of the Tally running on this computer (the tray app, "tally serve" or "tally listen" with
the same TALLY_HOME, and "tally follow" for a studio member): whether webhooks can reach it (receiver
port, public URL, registration), and whether recordings are being saved (downloads, disk space, keychain,
studio link). A studio member (following a studio from the app, "tally serve" or "tally follow") runs no
receiver: it is shown as a member, with its team server link, its mirror and its disk. Each part says what
to do, and the first recordings that need attention are named (channel, recording, why, when Tally tries
again), the rest counted.

Exit code: 0 all is well, 1 a warning, 2 an error (recordings may be lost now), 3 no Tally is running.
A Tally counts as running only while it answers on its control socket: a run file whose process is gone (or
whose PID now belongs to another program) is removed, with a line on stderr.

Options:
  --json       One JSON object: { "running": [ { "face", "pid", "health" } ], "state" }; each health names
               the first recordings that need attention in "problemRecordings" (channelId, key, state,
               reason, nextAttemptAt) and counts the rest in "moreProblems"
  -h, --help   Show this help

Examples:
  tally status
  tally status --json | jq .state
`;

const EXIT: Record<HealthState, number> = { ok: 0, warning: 1, error: 2 };
const MARK: Record<HealthState, string> = { ok: '✔', warning: '!', error: '✖' };
const FACE = { app: 'the tray app', serve: 'tally serve', listen: 'tally listen', follow: 'tally follow' } as const;

/** The worst state of every running Tally; one that does not answer counts as an error. */
function overall(running: Running[]): HealthState {
  let worst: HealthState = 'ok';
  for (const r of running) {
    const state = 'health' in r ? r.health.state : 'error';
    if (EXIT[state] > EXIT[worst]) worst = state;
  }
  return worst;
}

function print(io: CommandIo, r: Running): void {
  const who = `${FACE[r.info.face]} (process ${r.info.pid})`;
  if (!('health' in r)) {
    io.stdout.write(`✖ ${who} does not answer: ${terminalSafe(r.error)}\n`);
    return;
  }
  const h = r.health;
  // A studio member runs no receiver: it is described as a member, in its own words (issue 31).
  const role = h.member
    ? 'studio member'
    : h.receiver.port === null
      ? // Port 0 is "any free port", or no port known yet (its pipeline never opened): no port to name.
        h.receiver.configuredPort === 0
        ? 'not listening'
        : `not listening (port ${h.receiver.configuredPort})`
      : `port ${h.receiver.port}`;
  io.stdout.write(`${MARK[h.state]} ${who}: ${h.state}, ${role}, ${counted(h.problems, 'problem', 'problems')}\n`);
  if (h.member) io.stdout.write(`  ${terminalSafe(h.summary)}\n`);
  for (const c of h.components) {
    io.stdout.write(`  ${MARK[c.state]} ${c.id.padEnd(12)} ${terminalSafe(c.reason)}\n`);
    if (c.action && c.state !== 'ok') io.stdout.write(`    → ${terminalSafe(c.action)}\n`);
  }
  printProblems(io, h);
}

/**
 * The recordings behind the count, named: channel, recording, why, and when Tally tries again on its own (a
 * trial as a new user saw "downloads are failing" and no way to tell which without the popover).
 */
function printProblems(io: CommandIo, h: HealthView): void {
  const listed = h.problemRecordings ?? [];
  if (listed.length === 0) return;
  io.stdout.write('  Recordings that need attention:\n');
  for (const p of listed) {
    io.stdout.write(`    ${terminalSafe(problemRecordingText(p, (iso) => clockTime(new Date(iso))))}\n`);
  }
  const more = h.moreProblems ?? 0;
  if (more > 0) io.stdout.write(`    … and ${more} more\n`);
}

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' } });
    // A run file left by a Tally that is gone is removed, with a line on stderr (its PID may be another
    // program's now: it is not blamed for not answering).
    const running = await listRunning(appDataDir(io.env), ({ info, why }) => {
      io.stderr.write(
        `Removed the stale run file of ${FACE[info.face]} (process ${info.pid}): ${terminalSafe(why)}.\n`,
      );
    });
    if (running.length === 0) {
      if (values.json) io.stdout.write(`${JSON.stringify({ running: [], state: null })}\n`);
      else io.stdout.write('No Tally is running on this computer (TALLY_HOME). Start the app or "tally listen".\n');
      return 3;
    }
    const state = overall(running);
    if (values.json) {
      const list = running.map((r) => ({
        face: r.info.face,
        pid: r.info.pid,
        startedAt: r.info.startedAt,
        ...('health' in r ? { health: r.health } : { error: r.error }),
      }));
      io.stdout.write(`${JSON.stringify({ running: list, state })}\n`);
    } else {
      for (const r of running) print(io, r);
    }
    return EXIT[state];
  },
};

export default command;
