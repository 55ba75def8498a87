/**
 * `tally retry <channel|key>`: tries a waiting, failed, expired or gone recording again now, in the Tally running
 * on this TALLY_HOME (asked over its control socket, core/receive/control.ts).
 */
import { appDataDir } from '../core/paths.js';
import { askRetry, listRunning } from '../core/receive/control.js';
import type { Command, CommandIo } from './command.js';
import { UsageError } from './command.js';
import { parseCommandArgs } from './arguments.js';
import { terminalSafe } from './output.js';

const help = `Usage: tally retry <channel-id | recording-key>

Try a recording again now: one that waits for its next attempt after an error, failed, expired, or that the
service said is gone. Asks the Tally running on this computer (the tray app, "tally serve" or "tally listen"
with the same TALLY_HOME); "tally status" lists what needs attention.

Options:
  -h, --help   Show this help

Examples:
  tally retry 1581324488053_Dc5aQ
  tally status || tally retry night-owl   # retry when something needs attention
`;

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { positionals } = parseCommandArgs(argv, {}, true);
    const target = positionals[0];
    if (!target || positionals.length > 1) throw new UsageError('name one channel ID or recording key.');
    const running = (await listRunning(appDataDir(io.env))).filter((r) => 'health' in r);
    if (running.length === 0) {
      io.stderr.write(
        'tally retry: no Tally is running on this computer (TALLY_HOME). Start the app or "tally listen" first.\n',
      );
      return 3;
    }
    let retried = 0;
    for (const r of running) {
      const recordings = await askRetry(r.info, target);
      retried += recordings.length;
      // Said by channel (what the producer typed and knows), once per channel: twins are one recording.
      const channels = new Map<string, number>();
      for (const { key, channelId } of recordings)
        channels.set(channelId ?? key, (channels.get(channelId ?? key) ?? 0) + 1);
      for (const [channel, count] of channels) {
        io.stdout.write(`retrying ${terminalSafe(channel)} now${count > 1 ? ` (${count} recordings)` : ''}\n`);
      }
    }
    if (retried === 0) {
      io.stderr.write(
        `tally retry: no unsaved recording of "${terminalSafe(target)}" (channel ID or key) is known here.\n`,
      );
      return 1;
    }
    return 0;
  },
};

export default command;
