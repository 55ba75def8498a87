/**
 * The health of a studio member, kept as the member service's follower events come: the team server link, the
 * mirrors that fail (and those lost for good), the folder's disk. Judged by `judgeMemberHealth`, announced on
 * change, and (for `tally follow`) answered to `tally status` over the same control socket as a receiver's
 * (control.ts); in the app the receive service answers with this view.
 */
import { EventEmitter } from 'node:events';
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { HealthView } from '../health-view.js';
import { describeError, silentLogger, type Logger } from '../logger.js';
import type { Note } from '../notes.js';
import { systemClock, wallNow } from '../time.js';
import { logHealth } from './event-trail.js';
import { ControlServer, type Face } from './control.js';
import { ATTENTION_MS, judgeMemberHealth, type MemberFacts } from './health.js';

export class MemberHealth extends EventEmitter<{ health: [view: HealthView, previous: HealthView | null] }> {
  readonly #home: string;
  readonly #folder: string;
  #studio: MemberFacts['studio'] = { state: 'connecting', reason: [] };
  /** Mirrors failing and tried again, by identity: why, and the channel when the follower said it. */
  readonly #failing = new Map<string, { message: string; channelId: string | null }>();
  readonly #warnings = new Map<string, Note>();
  #lost: number[] = [];
  /** Recordings that expired before this member could mirror them, by identity, with when it learned of them. */
  readonly #missed = new Map<string, number>();
  /** Whether the producer acknowledged a missed recording (removed it from the list): the app says. */
  acknowledged: (identity: string) => boolean = () => false;
  #disks: MemberFacts['disks'] = [];
  #view: HealthView | null = null;
  #signature = '';
  #timer: NodeJS.Timeout | null = null;
  #control: ControlServer | null = null;

  readonly #trail: Logger;

  /** `trail`: where each change of health is written (the member's log file; see event-trail.ts). */
  constructor(home: string, folder: string, trail: Logger = silentLogger) {
    super();
    this.#home = home;
    this.#folder = folder;
    this.#trail = trail.child('health');
  }

  /** Starts the disk checks; with `control`, answers `tally status` as that face (the app's receive service does). */
  async start(log: (line: string) => void, control: Face | null = 'follow'): Promise<void> {
    try {
      if (control) {
        this.#control = await ControlServer.open(this.#home, control, {
          health: () => this.#judge(),
          retry: async () => [],
        });
      }
    } catch (error) {
      log(`tally status cannot reach this process: ${describeError(error)}`);
    }
    this.#timer = setInterval(() => void this.#checkDisk().then(() => this.#changed()), 30_000);
    this.#timer.unref();
    await this.#checkDisk();
    this.#changed();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#control?.close();
    this.#control = null;
  }

  /** The health judged now. */
  view(): HealthView {
    return this.#judge();
  }

  /** The team server link, and why it is not connected (notes, so the popover says them in its language). */
  link(state: MemberFacts['studio']['state'], reason: Note[]): void {
    this.#studio = { state, reason };
    // Once connected the folder exists (the follower made it): its disk is worth a fresh look.
    if (state === 'connected') void this.#checkDisk().then(() => this.#changed());
    else this.#changed();
  }

  failed(identity: string, message: string, willRetry: boolean, channelId: string | null = null): void {
    if (willRetry) this.#failing.set(identity, { message, channelId });
    else {
      this.#failing.delete(identity);
      this.#lost.push(systemClock.now());
    }
    this.#changed();
  }

  /** A standing warning of the follower (namesake, twin, folder full, S3 setup, lag), until it is cleared. */
  warning(kind: string, why: Note): void {
    this.#warnings.set(kind, why);
    this.#changed();
  }

  cleared(kind: string): void {
    if (this.#warnings.delete(kind)) this.#changed();
  }

  /** Recordings that expired from the team server before this member could mirror them: a warning until acknowledged. */
  missed(identities: readonly string[]): void {
    for (const identity of identities) this.#missed.set(identity, systemClock.now());
    this.#changed();
  }

  saved(identity: string): void {
    if (this.#failing.delete(identity)) this.#changed();
  }

  async #checkDisk(): Promise<void> {
    try {
      const fs = await statfsNearest(this.#folder);
      this.#disks = [{ path: this.#folder, freeBytes: Number(fs.bavail) * Number(fs.bsize), error: null }];
    } catch (error) {
      this.#disks = [{ path: this.#folder, freeBytes: null, error: describeError(error) }];
    }
  }

  #judge(): HealthView {
    // Lost mirrors count for ATTENTION_MS on the monotonic clock; `now` below is the time the view shows.
    const at = systemClock.now();
    this.#lost = this.#lost.filter((lostAt) => at - lostAt < ATTENTION_MS);
    const warned = [...this.#warnings.values()];
    // A connected link with a standing warning (a namesake, a full folder, lagging toward retention) is not ok.
    const studio: MemberFacts['studio'] =
      this.#studio.state === 'connected' && warned.length > 0 ? { state: 'warning', reason: warned } : this.#studio;
    return judgeMemberHealth({
      now: wallNow(),
      studio,
      failing: [...this.#failing.values()].map((f) => f.message),
      // Named in `tally status` like a receiver's (a mirror's next try is the follower's, not known here).
      failingNamed: [...this.#failing].map(([identity, f]) => ({
        channelId: f.channelId ?? identity,
        key: identity,
        state: 'pending',
        reason: f.message,
        nextAttemptAt: null,
      })),
      lost: this.#lost.length,
      missed: this.#missedNow(),
      disks: this.#disks,
    });
  }

  #missedNow(): number {
    const now = systemClock.now();
    let count = 0;
    for (const [identity, at] of this.#missed) {
      if (now - at >= ATTENTION_MS) this.#missed.delete(identity);
      else if (!this.acknowledged(identity)) count++;
    }
    return count;
  }

  #changed(): void {
    const view = this.#judge();
    const signature = JSON.stringify([
      view.state,
      view.components.map((c) => [c.id, c.state, c.reason]),
      view.problemRecordings?.map((p) => p.key),
    ]);
    if (signature === this.#signature) return;
    this.#signature = signature;
    const previous = this.#view;
    this.#view = view;
    logHealth(this.#trail, view, previous);
    this.emit('health', view, previous);
  }
}

/**
 * The free space where `folder` is or will be: a folder not made yet (the follower makes it once connected) is
 * judged by the nearest one above it that exists, not reported as a disk that cannot be read.
 */
async function statfsNearest(folder: string): Promise<Awaited<ReturnType<typeof statfs>>> {
  for (let path = folder; ; path = dirname(path)) {
    try {
      return await statfs(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(path) === path) throw error;
    }
  }
}
