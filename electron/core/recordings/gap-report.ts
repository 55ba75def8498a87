/**
 * Gap report: channels that ended while Tally was not running and for which no recording webhook
 * arrived. The service does not retry webhooks (nothing is documented), so a recording announced while
 * the receiver was down is silently gone unless the producer learns about it within 6 hours.
 *
 * "Last running" is a heartbeat file rewritten every minute while the pipeline runs, per service; on start the
 * period from that service's heartbeat to now is searched and compared with the inbox. The first run for a
 * service has no heartbeat: nothing before it counts as missed.
 */
import { errorNote, type Note } from '../notes.js';
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
  /** `error` as notes the popover translates. */
  errorNotes?: Note[] | null;
}

const HEARTBEAT_FILE = 'last-running.json';
/** Services remembered in the heartbeat file; the ones run longest ago are forgotten first. */
const MAX_SCOPES = 50;

/** The file's content: when Tally last ran at all, and when it last ran for each service. */
interface HeartbeatFile {
  at?: unknown;
  scopes?: unknown;
}

async function readHeartbeatFile(dir: string): Promise<HeartbeatFile | null> {
  try {
    const raw: unknown = JSON.parse(await readFile(join(dir, HEARTBEAT_FILE), 'utf8'));
    return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as HeartbeatFile) : null;
  } catch {
    return null;
  }
}

function dateOf(at: unknown): Date | null {
  const date = typeof at === 'string' ? new Date(at) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}

function scopesOf(file: HeartbeatFile | null): Record<string, unknown> | null {
  const scopes = file?.scopes;
  return typeof scopes === 'object' && scopes !== null && !Array.isArray(scopes)
    ? (scopes as Record<string, unknown>)
    : null;
}

/**
 * Reads the last heartbeat, or null when Tally never ran here (or the file is unreadable). With `scope` (the
 * service ID), the last time Tally ran for that service: null on its first run, so a gap report never counts
 * the channels a service had before Tally first ran for it as missed. A file from before scopes were kept
 * answers for any service, so an upgrade does not hide a genuine gap.
 */
export async function readHeartbeat(dir: string, scope?: string | null): Promise<Date | null> {
  const file = await readHeartbeatFile(dir);
  if (scope === undefined) return dateOf(file?.at);
  const scopes = scopesOf(file);
  if (!scopes) return dateOf(file?.at);
  return dateOf(Object.hasOwn(scopes, scope ?? '') ? scopes[scope ?? ''] : undefined);
}

/** Atomically records "Tally was running at `now`" (for the service `scope`, when given). */
export async function writeHeartbeat(dir: string, now: Date = new Date(), scope?: string | null): Promise<void> {
  await mkdir(dir, { recursive: true });
  const at = now.toISOString();
  const previous = scopesOf(await readHeartbeatFile(dir));
  const tmp = join(dir, `${HEARTBEAT_FILE}.${process.pid}.tmp`);
  if (scope === undefined && !previous) {
    // Written without a service, read as any service's (as files from before scopes were).
    await writeFile(tmp, JSON.stringify({ at }));
    await rename(tmp, join(dir, HEARTBEAT_FILE));
    return;
  }
  const scopes: Record<string, string> = {};
  for (const [key, value] of Object.entries(previous ?? {})) if (dateOf(value)) scopes[key] = value as string;
  if (scope !== undefined) {
    delete scopes[scope ?? ''];
    scopes[scope ?? ''] = at;
  }
  const kept = Object.entries(scopes)
    .sort(([, a], [, b]) => (a < b ? 1 : a > b ? -1 : 0))
    .slice(0, MAX_SCOPES);
  await writeFile(tmp, JSON.stringify({ at, scopes: Object.fromEntries(kept) }));
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
    const message = error instanceof Error ? error.message : String(error);
    return { since, checkedAt: now, missing: [], error: message, errorNotes: [errorNote(error)] };
  }
}
