/**
 * Bench helper (own process): opens the recordings journal in `argv[2]` as Tally does at start-up and prints
 * how long the open took and the process's RSS afterwards (after a GC when exposed), as one JSON line.
 */
import { Inbox } from '../../electron/core/recordings/inbox.js';

const dir = process.argv[2] ?? '';
const started = performance.now();
const inbox = await Inbox.open(dir, { compactAfterLines: Number.MAX_SAFE_INTEGER });
const openMs = performance.now() - started;
(globalThis as { gc?: () => void }).gc?.();
const rssMb = process.memoryUsage().rss / 1e6;
const jobs = inbox.replay.jobs;
await inbox.close();
process.stdout.write(`${JSON.stringify({ openMs, rssMb, jobs, peakRssMb: process.resourceUsage().maxRSS / 1e3 })}\n`);
