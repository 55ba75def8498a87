/** `tally search`: past (and current) channels in a time range, optionally filtered by a piece of the ID. */
import type { ApiSearchResult } from '../core/api-client.js';
import { ValidationError } from '../core/errors.js';
import { channelToJson } from '../core/model.js';
import type { Channel } from '../core/model.js';
import { parseTimeInput } from '../core/time-input.js';
import { UsageError } from './command.js';
import { CONNECTION_HELP } from './arguments.js';
import { serviceCommand } from './service-client.js';
import { formatDateTime, formatDuration, table } from './output.js';

const help = `Usage: tally search [options]

Search channels by time range and by a string their ID contains. Newest first.

Options:
  --since <time>      Start of the period (default: 24h, i.e. 24 hours ago)
  --until <time>      End of the period (default: now)
  --keyword <text>    Only channels whose ID contains this text
  --limit <n>         Show at most n channels (the total count is still printed)
  --json              Print {"totalCount", "truncated", "channels": [...]} instead of a table
  -h, --help          Show this help

A time is a span back from now (90s, 30m, 2h, 7d, 2w), "now", an ISO 8601 date or date-time
(2024-05-01, 2024-05-01T14:30, 2024-05-01T14:30:00Z; without a zone it is local time), or @<unix seconds>.

${CONNECTION_HELP}
Examples:
  tally search
  tally search --since 7d --keyword lobby
  tally search --since 2024-05-01 --until 2024-05-02 --json
  tally search --since 2h --limit 20
`;

/** The human table of a search result, with a count line and a hint when the list is incomplete. */
export function renderSearch(result: ApiSearchResult, shown: readonly Channel[], period: { since: Date; until: Date }) {
  const range = `between ${formatDateTime(period.since)} and ${formatDateTime(period.until)}`;
  if (result.channels.length === 0 && result.totalCount === 0) return `No channels ${range}.\n`;
  const body = table(shown, [
    { header: 'ID', value: (c) => c.id, maxWidth: 48 },
    { header: 'CREATED', value: (c) => formatDateTime(c.createdAt) },
    { header: 'ENDED', value: (c) => (c.endedAt ? formatDateTime(c.endedAt) : 'live') },
    {
      header: 'DURATION',
      value: (c) => (c.endedAt ? formatDuration(c.endedAt.getTime() - c.createdAt.getTime()) : '—'),
      align: 'right',
    },
    {
      header: 'SESSIONS',
      value: (c) => (c.cumulativeSessions === null ? '—' : String(c.cumulativeSessions)),
      align: 'right',
    },
  ]);
  const total = result.totalCount === 1 ? '1 channel' : `${result.totalCount} channels`;
  const count =
    shown.length < result.totalCount ? `Showing ${shown.length} of ${total} ${range}.` : `${total} ${range}.`;
  return `${body}${count}\n`;
}

const options = {
  since: { type: 'string' },
  until: { type: 'string' },
  keyword: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export default serviceCommand(help, options, async (values, io, context) => {
  const now = new Date();
  const since = readTime(values.since ?? '24h', now, '--since');
  const until = readTime(values.until ?? 'now', now, '--until');
  if (since.getTime() > until.getTime()) throw new UsageError('--since is after --until.');
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || !Number.isSafeInteger(limit) || limit < 1) {
      throw new UsageError('--limit must be a whole number of 1 or more.');
    }
  }

  const ctx = await context();
  const result = await ctx.api.search({ since, until, keyword: values.keyword ?? '' });
  const shown = limit === undefined ? result.channels : result.channels.slice(0, limit);

  if (values.json) {
    const out = { totalCount: result.totalCount, truncated: result.truncated, channels: shown.map(channelToJson) };
    io.stdout.write(`${JSON.stringify(out)}\n`);
  } else {
    io.stdout.write(renderSearch(result, shown, { since, until }));
  }
  if (result.truncated) {
    io.stderr.write(
      `tally search: the service holds ${result.totalCount} matching channels but only ${result.channels.length} could be listed; narrow the period.\n`,
    );
  }
  return 0;
});

function readTime(text: string, now: Date, flag: string): Date {
  try {
    return parseTimeInput(text, now, flag);
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError(error.message);
    throw error;
  }
}
