/** `tally end <channelId>`: force-ends a live channel, after a confirmation on a terminal. */
import type { Command, CommandIo } from './command.js';
import { UsageError } from './command.js';
import { CONNECTION_HELP, CONNECTION_OPTIONS, connectionFlags, parseCommandArgs } from './arguments.js';
import { isTty, readLine } from './prompts.js';
import { loadContext } from './service-client.js';

const help = `Usage: tally end <channelId> [options]

Force-end a live channel. Everyone watching it is disconnected at once.
On a terminal you are asked to confirm; in scripts (no terminal) --yes is required.

Options:
  --yes               Do not ask for confirmation
  --json              Print {"id", "ended": true} instead of a sentence
  -h, --help          Show this help

${CONNECTION_HELP}
Examples:
  tally end 1581324488053_Dc5aQ
  tally end 1581324488053_Dc5aQ --yes
  tally live --json | jq -r '.[0].id' | xargs -I{} tally end {} --yes
`;

/** The confirmation question, exactly as printed. */
export function confirmQuestion(channelId: string): string {
  return `End channel ${channelId} now? Viewers will be disconnected. [y/N] `;
}

const command: Command = {
  help,
  async run(argv: string[], io: CommandIo): Promise<number> {
    const { values, positionals } = parseCommandArgs(
      argv,
      { ...CONNECTION_OPTIONS, yes: { type: 'boolean', short: 'y' }, json: { type: 'boolean' } },
      true,
    );
    if (positionals.length === 0) throw new UsageError('Which channel? Give its ID: tally end <channelId>.');
    if (positionals.length > 1) throw new UsageError('Give exactly one channel ID.');
    const channelId = positionals[0] as string;
    if (!channelId.trim()) throw new UsageError('The channel ID is empty.');

    if (!values.yes && !isTty(io.stdin)) {
      throw new UsageError(`Not ending ${channelId}: stdin is not a terminal, so pass --yes to confirm.`);
    }
    // Credentials and hosts first, so a setup problem shows before the question rather than after it.
    const ctx = await loadContext(io, connectionFlags(values));
    if (!values.yes) {
      io.stderr.write(confirmQuestion(channelId));
      const answer = (await readLine(io))?.trim().toLowerCase();
      if (answer !== 'y' && answer !== 'yes') {
        io.stderr.write(`Cancelled: ${channelId} was not ended.\n`);
        return 1;
      }
    }

    await ctx.api.endChannel(channelId);
    if (values.json) io.stdout.write(`${JSON.stringify({ id: channelId, ended: true })}\n`);
    else io.stdout.write(`Ended ${channelId}.\n`);
    return 0;
  },
};

export default command;
