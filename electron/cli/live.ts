/** `tally live`: the channels broadcasting now, once or refreshed until Ctrl+C. */
import { setTimeout as sleep } from 'node:timers/promises';
import { BadCredentialsError, ConfigError } from '../core/errors.js';
import { channelToJson } from '../core/model.js';
import type { Channel } from '../core/model.js';
import { UsageError } from './command.js';
import { CONNECTION_HELP } from './arguments.js';
import { isTty } from './prompts.js';
import { serviceCommand } from './service-client.js';
import { clockTime, formatError, relativeTime, table } from './output.js';

const help = `Usage: tally live [options]

List the channels that are broadcasting now, newest first, with their current watcher count.

Options:
  --json              Print a JSON array of channels (one array per refresh with --watch)
  --watch             Refresh until Ctrl+C
  --interval <sec>    Seconds between refreshes with --watch (default: the pollIntervalSec setting, 5)
  -h, --help          Show this help

${CONNECTION_HELP}
Examples:
  tally live
  tally live --json | jq '.[].id'
  tally live --watch --interval 10
  TALLY_BASE_URL=http://127.0.0.1:4000 tally live
`;

export const EMPTY_LIVE_LINE = 'No channels are live right now.';

/** The human table of live channels (or the empty-state line). */
export function renderLive(channels: readonly Channel[], now: Date): string {
  if (channels.length === 0) return `${EMPTY_LIVE_LINE}\n`;
  const rows = [...channels].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const body = table(rows, [
    { header: 'ID', value: (c) => c.id, maxWidth: 48 },
    { header: 'WATCHERS', value: (c) => (c.watchers === null ? '—' : String(c.watchers)), align: 'right' },
    { header: 'STARTED', value: (c) => relativeTime(c.createdAt, now) },
  ]);
  const count = channels.length === 1 ? '1 channel live.' : `${channels.length} channels live.`;
  return `${body}${count}\n`;
}

const options = { json: { type: 'boolean' }, watch: { type: 'boolean' }, interval: { type: 'string' } } as const;

export default serviceCommand(help, options, async (values, io, context) => {
  if (values.interval !== undefined && !values.watch) throw new UsageError('--interval only applies with --watch.');
  const ctx = await context();
  const json = values.json === true;

  const print = (channels: Channel[]) => {
    if (json) io.stdout.write(`${JSON.stringify(channels.map(channelToJson))}\n`);
    else io.stdout.write(renderLive(channels, new Date()));
  };

  if (!values.watch) {
    print(await ctx.api.listLive());
    return 0;
  }

  const intervalSec = values.interval === undefined ? ctx.settings.pollIntervalSec : Number(values.interval);
  if (!Number.isFinite(intervalSec) || intervalSec < 0.1 || intervalSec > 3600) {
    throw new UsageError('--interval must be a number of seconds between 0.1 and 3600.');
  }
  const redraw = !json && isTty(io.stdout);
  while (!io.signal.aborted) {
    try {
      const channels = await ctx.api.listLive();
      if (redraw) io.stdout.write('\u001b[2J\u001b[H');
      if (!json) io.stdout.write(`Live channels at ${clockTime()} (Ctrl+C to stop)\n`);
      print(channels);
      if (!json && !redraw) io.stdout.write('\n');
    } catch (error) {
      if (io.signal.aborted) break;
      // Wrong credentials or missing setup will not fix themselves; anything else may be a blip.
      if (error instanceof BadCredentialsError || error instanceof ConfigError) throw error;
      io.stderr.write(`tally live: ${formatError(error)} Retrying in ${intervalSec} s.\n`);
    }
    try {
      await sleep(intervalSec * 1000, undefined, { signal: io.signal });
    } catch {
      break;
    }
  }
  return 0;
});
