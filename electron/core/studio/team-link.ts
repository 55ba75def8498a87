/**
 * Whether the team server answers, as a receiver or a member should show it: a connection can be open while
 * nothing answers on it (a hung server that still accepts, a cluster that lost its majority and can neither
 * store nor announce). Two signs, both measured rather than assumed: the client's own pings (a server that
 * stopped answering them is left for another of the list, and named here), and every few seconds two JetStream
 * requests (the account's JetStream info, then the studio stream's) that only a cluster that can store and
 * announce answers. Issue 30.
 *
 * Each probe also sends one protocol ping (the client's `rtt()`): a server that answered neither, and sent no
 * byte at all, by the time the request timed out is hung, and the client is told to leave it now (`reconnect()`),
 * some 5-10 s before its own pings would say so.
 * Measured on a 3-node cluster with a node SIGSTOPped (tests/studio-hung-server.spec.ts): the member's read
 * consumer was answering from a surviving server within a few seconds of the client moving (its pulls, and the
 * client's own heartbeat check, carry it over); what held the first recording 15-25 s was the receiver still
 * sitting on the hung node, waiting for its pings.
 */
import { EventEmitter } from 'node:events';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { describeError } from '../logger.js';
import { note, noteText, type Note } from '../notes.js';
import { PING_INTERVAL_MS, MAX_PINGS_OUT, STUDIO_STREAM } from './team.js';
import { systemClock } from '../time.js';

/** How often the cluster is asked whether it can store and announce, and how long an answer may take. */
export const TEAM_PROBE_MS = 5_000;
const PROBE_TIMEOUT_MS = 4_000;

/** The link's state: answering, or not (with the server it is about and why, for health and lines). */
export interface TeamAnswer {
  answering: boolean;
  /** `nats://host:port` of the server concerned. */
  server: string;
  note: Note | null;
  message: string | null;
}

export class TeamLink extends EventEmitter<{ change: [answer: TeamAnswer] }> {
  readonly #nc: NatsConnection;
  readonly #scheme: string;
  readonly #everyMs: number;
  readonly #role: 'receiver' | 'member';
  #timer: NodeJS.Timeout | null = null;
  #asking = false;
  #disconnected = false;
  #stopped = false;
  #answer: TeamAnswer | null = null;

  /**
   * `role`: whose link it is, so what the server cannot do is said in that side's terms: a receiver cannot store or
   * announce its recordings, a member cannot be told of new ones or mirror them.
   */
  constructor(nc: NatsConnection, opts: { scheme: string; role: 'receiver' | 'member'; everyMs?: number }) {
    super();
    this.#nc = nc;
    this.#scheme = opts.scheme;
    this.#role = opts.role;
    this.#everyMs = opts.everyMs ?? TEAM_PROBE_MS;
  }

  /** The last state said (null before the first). */
  get answer(): TeamAnswer | null {
    return this.#answer;
  }

  start(): void {
    void this.#watch();
    this.#timer = setInterval(() => void this.probe(), this.#everyMs);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  #where(server = this.#nc.getServer()): string {
    return `${this.#scheme}//${server}`;
  }

  #say(answering: boolean, server: string, n: Note | null): void {
    if (this.#stopped) return;
    const before = this.#answer;
    const answer: TeamAnswer = { answering, server, note: n, message: n ? noteText(n) : null };
    this.#answer = answer;
    if (before?.answering === answering && before.server === server && before.message === answer.message) return;
    this.emit('change', answer);
  }

  /** The client's status: a server that stopped answering pings is named before the client leaves it. */
  async #watch(): Promise<void> {
    for await (const s of this.#nc.status()) {
      if (this.#stopped) break;
      if (s.type === 'staleConnection') {
        const seconds = Math.round((PING_INTERVAL_MS * (MAX_PINGS_OUT + 1)) / 1000);
        this.#say(false, this.#where(), note('teamNotAnswering', { where: this.#where(), seconds }));
      } else if (s.type === 'disconnect') this.#disconnected = true;
      else if (s.type === 'reconnect') {
        this.#disconnected = false;
        void this.probe();
      }
    }
  }

  /** Asks the cluster once (skipped while the client reconnects: that is said as the connection's state). */
  async probe(): Promise<void> {
    if (this.#asking || this.#stopped || this.#disconnected || this.#nc.isClosed()) return;
    this.#asking = true;
    const where = this.#where();
    const began = systemClock.now();
    // One protocol ping alongside: it has had the whole request's time to come back when the request times out.
    // And what the server sent meanwhile: a server busy sending a member a large recording over a slow line may
    // answer late, but a hung one sends nothing at all.
    const sentBefore = this.#nc.stats().inBytes;
    let ponged = false;
    this.#nc.rtt().then(
      () => (ponged = true),
      () => undefined,
    );
    try {
      // The account check first (`checkAPI`, the default): a lone server of a cluster that lost its majority
      // still answers the stream's info from what it last knew, and refuses this one.
      const jsm = await jetstreamManager(this.#nc, { timeout: PROBE_TIMEOUT_MS });
      await jsm.streams.info(STUDIO_STREAM);
      this.#say(true, where, null);
    } catch (error) {
      if (this.#disconnected || this.#nc.isClosed()) return;
      const detail = describeError(error).split('\n')[0]!.slice(0, 200);
      if (/timeout/i.test(detail) && !ponged && this.#nc.stats().inBytes === sentBefore) {
        const seconds = Math.round((systemClock.now() - began) / 1000);
        this.#say(false, where, note('teamNotAnswering', { where, seconds }));
        await this.#nc.reconnect().catch(() => undefined);
        return;
      }
      this.#say(
        false,
        where,
        note(this.#role === 'member' ? 'teamCannotMirror' : 'teamCannotStore', { where, detail }),
      );
    } finally {
      this.#asking = false;
    }
  }
}
