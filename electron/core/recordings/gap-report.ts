/**
 * Gap report: channels that ended while Tally was not running and for which no recording webhook
 * arrived. The service does not retry webhooks (nothing is documented), so a recording announced while
 * the receiver was down is silently gone unless the producer learns about it within 6 hours.
 *
 * "Last running" is a heartbeat file rewritten every minute while the pipeline runs; on start the period
 * from that heartbeat to now is searched and compared with the inbox.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Channel, SearchResult } from '../model.js';

export interface GapEntry {
  channelId: string;
  endedAt: Date;
}

export interface GapReportResult {
  since: Date | null;
  checkedAt: Date;
  missing: GapEntry[];
  /** Set when the check could not run (no credentials, service unreachable): the UI says so. */
  error: string | null;
}

const HEARTBEAT_FILE = 'last-running.json';

/** Reads the last heartbeat, or null when Tally never ran here (or the file is unreadable). */
export async function readHeartbeat(dir: string): Promise<Date | null> {
  try {
    const raw: unknown = JSON.parse(await readFile(join(dir, HEARTBEAT_FILE), 'utf8'));
    const at = typeof raw === 'object' && raw !== null ? (raw as { at?: unknown }).at : undefined;
    const date = typeof at === 'string' ? new Date(at) : null;
    return date && !Number.isNaN(date.getTime()) ? date : null;
  } catch {
    return null;
  }
}

/** Atomically records "Tally was running at `now`". */
export async function writeHeartbeat(dir: string, now: Date = new Date()): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${HEARTBEAT_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify({ at: now.toISOString() }));
  await rename(tmp, join(dir, HEARTBEAT_FILE));
}

/**
 * Searches `[since, now]` and returns ended channels with no known recording. Channels that ended in the
 * last `graceMs` are left out: their webhook may simply not have arrived yet.
 */
export async function findGaps(opts: {
  since: Date | null;
  now?: Date;
  /** Never look further back than the retention window: older recordings are gone anyway. */
  maxLookbackMs?: number;
  graceMs?: number;
  search: (q: { since: Date; until: Date }) => Promise<Pick<SearchResult, 'channels'>>;
  knownChannelIds: ReadonlySet<string>;
}): Promise<GapReportResult> {
  const now = opts.now ?? new Date();
  const maxLookback = opts.maxLookbackMs ?? 6 * 60 * 60 * 1000;
  if (!opts.since) return { since: null, checkedAt: now, missing: [], error: null };
  const since = new Date(Math.max(opts.since.getTime(), now.getTime() - maxLookback));
  const cutoff = now.getTime() - (opts.graceMs ?? 60_000);
  try {
    const { channels } = await opts.search({ since, until: now });
    const missing = channels
      .filter(
        (c: Channel) => c.endedAt !== null && c.endedAt.getTime() >= since.getTime() && c.endedAt.getTime() <= cutoff,
      )
      .filter((c) => !opts.knownChannelIds.has(c.id))
      .map((c) => ({ channelId: c.id, endedAt: c.endedAt as Date }))
      .sort((a, b) => b.endedAt.getTime() - a.endedAt.getTime());
    return { since, checkedAt: now, missing, error: null };
  } catch (error) {
    return { since, checkedAt: now, missing: [], error: error instanceof Error ? error.message : String(error) };
  }
}
