/**
 * How far each studio member is behind, read from the announcement stream's durable consumers: recordings not
 * yet acknowledged (pending), and when the oldest of them leaves the team server (its stream time plus the
 * retention). A member that is offline longer than the retention loses the oldest recordings for good, so the
 * receiver and the member itself warn while there is still time to act.
 */
import type { ConsumerInfo, JetStreamManager } from '@nats-io/jetstream';
import { STUDIO_STREAM, serverNow } from './team.js';

export interface MemberLag {
  /** The durable consumer (`member-<id>`). */
  consumer: string;
  /** What the member calls itself (`name on host`), or the consumer's name for older members. */
  label: string;
  /** Announcements the member has not acknowledged yet. */
  pending: number;
  /** When the oldest of them was announced, and how long until the team server drops it (null: nothing pending). */
  oldestAt: Date | null;
  expiresInMs: number | null;
  /** When the team server drops the oldest pending recording (null: nothing pending). */
  expiresAt: Date | null;
}

/** The stream's first sequence, read once however many consumers ask (membersLag). */
const firstSeqOf = (jsm: JetStreamManager) => {
  let first: Promise<number> | null = null;
  return () => (first ??= jsm.streams.info(STUDIO_STREAM).then((info) => info.state.first_seq));
};

/** The server's time now, asked at most once per reading (and only when a member has something pending). */
const serverTimeOf = (jsm: JetStreamManager) => {
  let now: Promise<number> | null = null;
  return () => (now ??= serverNow(jsm, STUDIO_STREAM));
};

/** The lag of one consumer of the studio stream. */
export async function consumerLag(
  jsm: JetStreamManager,
  ci: ConsumerInfo,
  retentionMs: number,
  firstSeq: () => Promise<number> = firstSeqOf(jsm),
  serverTime: () => Promise<number> = serverTimeOf(jsm),
): Promise<MemberLag> {
  const pending = ci.num_pending + ci.num_ack_pending;
  const lag: MemberLag = {
    consumer: ci.name,
    label: ci.config.description || ci.name,
    pending,
    oldestAt: null,
    expiresInMs: null,
    expiresAt: null,
  };
  if (pending === 0) return lag;
  // The first announcement after the acknowledged floor that the stream still holds.
  const seq = Math.max(ci.ack_floor.stream_seq + 1, await firstSeq());
  const oldest = await jsm.streams.getMessage(STUDIO_STREAM, { seq }).catch(() => null);
  if (!oldest) return lag;
  lag.oldestAt = oldest.time;
  lag.expiresAt = new Date(oldest.time.getTime() + retentionMs);
  // The message's time is the server's stamp: judged against the server's clock, not this computer's (issue 30).
  lag.expiresInMs = lag.expiresAt.getTime() - (await serverTime());
  return lag;
}

/** Every member's lag (durable consumers only: the views' ordered readers are not members). */
export async function membersLag(jsm: JetStreamManager, retentionMs: number): Promise<MemberLag[]> {
  const lags: MemberLag[] = [];
  const firstSeq = firstSeqOf(jsm);
  const serverTime = serverTimeOf(jsm);
  for await (const ci of jsm.consumers.list(STUDIO_STREAM)) {
    if (!ci.config.durable_name) continue;
    lags.push(await consumerLag(jsm, ci, retentionMs, firstSeq, serverTime));
  }
  return lags;
}

/** Whether the oldest pending recording leaves the team server within `warnMs`. */
export function lagging(lag: MemberLag, warnMs: number): boolean {
  return lag.expiresInMs !== null && lag.expiresInMs < warnMs;
}

/** A short duration for a warning: `40 min`, `5 h`, `2 d`. */
export function shortDuration(ms: number): string {
  const minutes = Math.max(0, Math.round(ms / 60_000));
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} d`;
}

/** Warn a day before a recording expires (half the retention, when the retention is shorter than two days). */
export function defaultLagWarnMs(retentionMs: number): number {
  return Math.min(24 * 60 * 60 * 1000, retentionMs / 2);
}

/**
 * Numbers lag readings that may overlap (a member reads its lag after each recording it settles, and settles
 * several side by side): a reading applies its result only while no newer one was started, so one taken before
 * the last acknowledgements never puts back a warning that a newer reading cleared.
 */
export class NewestReading {
  #started = 0;

  /** Starts a reading; the function answers whether it is still the newest when its result is in. */
  start(): () => boolean {
    const reading = ++this.#started;
    return () => reading === this.#started;
  }
}
