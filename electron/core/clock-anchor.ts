/**
 * A wall-clock step made while Tally was not running (issue 30): the journal's deadlines are wall times, and a
 * restart has nothing else. The difference between the wall clock and the boot clock (`os.uptime()`: it counts
 * a suspend and never steps) stays put for as long as the machine runs, whatever Tally does; it is kept in the
 * state folder (`clock.json`, with the boot's ID), and a start on the same boot that finds it changed has seen a
 * step of that size. Linux only (the boot ID and a boot clock that counts sleep); elsewhere nothing is seen.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { uptime } from 'node:os';
import path from 'node:path';
import { STEP_TOLERANCE_MS, wallNow } from './time.js';

const FILE = 'clock.json';

interface Anchor {
  bootId: string;
  /** Wall-clock ms minus boot-clock ms when it was written. */
  wallMinusBootMs: number;
}

async function bootId(): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim() || null;
}

/** The wall clock's offset from the boot clock now, on this boot (null where it cannot be told). */
async function anchorNow(): Promise<Anchor | null> {
  const id = await bootId();
  return id === null ? null : { bootId: id, wallMinusBootMs: wallNow() - uptime() * 1000 };
}

/**
 * The wall clock's step since `writeClockAnchor(dir)` last ran on this boot, in ms (positive: forward), or 0
 * when there is none, the machine booted since, or it cannot be told.
 */
export async function wallClockStepSince(dir: string): Promise<number> {
  const now = await anchorNow();
  if (!now) return 0;
  let kept: Partial<Anchor>;
  try {
    kept = JSON.parse(await readFile(path.join(dir, FILE), 'utf8')) as Partial<Anchor>;
  } catch {
    return 0;
  }
  if (kept.bootId !== now.bootId || typeof kept.wallMinusBootMs !== 'number') return 0;
  const step = now.wallMinusBootMs - kept.wallMinusBootMs;
  return Math.abs(step) < STEP_TOLERANCE_MS ? 0 : Math.round(step);
}

/** Keeps the wall clock's present offset from the boot clock in `dir` (at a start and after every step seen). */
export async function writeClockAnchor(dir: string): Promise<void> {
  const now = await anchorNow();
  if (now) await writeFile(path.join(dir, FILE), `${JSON.stringify(now)}\n`);
}
