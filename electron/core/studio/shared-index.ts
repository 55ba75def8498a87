/**
 * Which recordings a member missed while it was away (issue 31): the receiver keeps every announcement it makes in
 * a KV bucket by its stream sequence, four times longer than the recordings themselves, and a member remembers the
 * highest stream sequence it has handled. A member back after recordings expired from the team store finds the
 * sequences between the two (those the stream no longer holds) in the index, and so learns which it can no longer
 * mirror instead of hearing nothing ("All is well").
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { parseAnnouncement, type Announcement } from './announcement.js';

/** The index bucket: stream sequence (zero-padded) → the announcement made with it. */
export const INDEX_BUCKET = 'tally-studio-index';
/** The index outlives the recordings this many times, so a member away longer than the retention still learns. */
export const INDEX_KEEP_FACTOR = 4;
/** At most this many missed recordings are named at once (a member away for months hears of the newest). */
export const MISSED_LIMIT = 500;

const seqKey = (seq: number) => String(seq).padStart(12, '0');

/**
 * The index bucket, set up once per connection and settings: setting it up asks the server for the stream's info
 * (and creates or updates it), which a receiver paid on every announcement, a round trip and the server's work
 * each time. A failed set-up is asked again next time.
 */
const buckets = new WeakMap<NatsConnection, Map<string, Promise<KV>>>();

function indexBucket(nc: NatsConnection, retentionMs: number, replicas?: number): Promise<KV> {
  let mine = buckets.get(nc);
  if (!mine) buckets.set(nc, (mine = new Map()));
  const key = `${retentionMs}/${replicas ?? ''}`;
  let kv = mine.get(key);
  if (!kv) {
    kv = new Kvm(nc).create(INDEX_BUCKET, {
      history: 1,
      ttl: retentionMs * INDEX_KEEP_FACTOR,
      ...(replicas ? { replicas } : {}),
    });
    mine.set(key, kv);
    const set = mine;
    kv.catch(() => set.delete(key));
  }
  return kv;
}

/**
 * The receiver's side: keeps the announcement published with stream sequence `seq`. A put that fails sets the
 * bucket up again once (it may have been removed since) before giving up.
 */
export async function indexAnnouncement(
  nc: NatsConnection,
  seq: number,
  a: Announcement,
  retentionMs: number,
  replicas?: number,
): Promise<void> {
  const value = JSON.stringify(a);
  try {
    await (await indexBucket(nc, retentionMs, replicas)).put(seqKey(seq), value);
  } catch {
    buckets.get(nc)?.delete(`${retentionMs}/${replicas ?? ''}`);
    await (await indexBucket(nc, retentionMs, replicas)).put(seqKey(seq), value);
  }
}

/**
 * Index entries asked for at once by a member coming back: one after the other, a member away for a while paid a
 * round trip per missed sequence (500 round trips over a slow link is many seconds before it mirrors anything).
 */
const GETS_AT_ONCE = 32;

/**
 * The member's side: the announcements with a stream sequence after `after` and before `before` (the stream's
 * first one now), newest MISSED_LIMIT of them; none when the index does not exist (a receiver older than it).
 */
export async function announcementsBetween(nc: NatsConnection, after: number, before: number): Promise<Announcement[]> {
  if (before - after <= 1) return [];
  const kv = await new Kvm(nc).open(INDEX_BUCKET).catch(() => null);
  if (!kv) return [];
  const found: Announcement[] = [];
  for (let seq = before - 1; seq > after && found.length < MISSED_LIMIT;) {
    const batch: number[] = [];
    for (; seq > after && batch.length < GETS_AT_ONCE; seq--) batch.push(seq);
    const entries = await Promise.all(batch.map((n) => kv.get(seqKey(n)).catch(() => null)));
    for (const entry of entries) {
      if (found.length >= MISSED_LIMIT) break;
      if (!entry || entry.operation !== 'PUT') continue;
      const a = parseAnnouncement(entry.value);
      if (a) found.push(a);
    }
  }
  return found.reverse();
}

/** The highest stream sequence a member has handled, kept in its state folder across restarts. */
export class HandledSequence {
  readonly #file: string;
  #value: number | null = null;
  #writing: Promise<void> = Promise.resolve();

  private constructor(dir: string) {
    this.#file = join(dir, 'handled-seq');
  }

  static async open(dir: string): Promise<HandledSequence> {
    const handled = new HandledSequence(dir);
    const text = await readFile(handled.#file, 'utf8').catch(() => '');
    const n = Number(text.trim());
    // 0: a member since the stream's start that has settled nothing yet (see the follower's #learnMissed).
    handled.#value = text.trim() !== '' && Number.isSafeInteger(n) && n >= 0 ? n : null;
    return handled;
  }

  /** null on a member's first run until it has joined (it was not a member before: nothing was missed). */
  get value(): number | null {
    return this.#value;
  }

  /** Remembers `seq` when it is higher (written in the background, one write at a time, replaced atomically). */
  handled(seq: number): Promise<void> {
    if (this.#value !== null && seq <= this.#value) return this.#writing;
    this.#value = seq;
    this.#writing = this.#writing
      .catch(() => undefined)
      .then(async () => {
        const value = this.#value;
        await mkdir(join(this.#file, '..'), { recursive: true });
        await writeFile(`${this.#file}.tmp`, `${value}\n`);
        await rename(`${this.#file}.tmp`, this.#file);
      });
    return this.#writing.catch(() => undefined);
  }
}
