/**
 * What the team holds: every announcement still on the studio stream (7 days by default), read from the start
 * with an ordered consumer (no state on the server, recreated by the client after a reconnect) and then kept up
 * to date as new ones arrive. The tray app's Studio view lists these, each with its state on this computer, so
 * it shows recordings shared before the app started, not only those shared while it runs.
 */
import { EventEmitter } from 'node:events';
import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { describeError, silentLogger, type Logger } from '../logger.js';
import { parseAnnouncement, type Announcement } from './announcement.js';
import { STUDIO_STREAM } from './team.js';

/** The newest this many announcements are kept (a view is not a full history; the stream is). */
export const CATALOGUE_LIMIT = 2_000;

export class TeamCatalogue extends EventEmitter<{ changed: [] }> {
  readonly #byIdentity = new Map<string, Announcement>();
  #messages: ConsumerMessages | null = null;
  #stopped = false;

  /**
   * Reads the stream from its first message, then follows it, until `stop()`. Resolves once reading started;
   * never throws: without the list, a view shows what this computer knows, and mirroring goes on regardless.
   */
  async start(nc: NatsConnection, log: Logger = silentLogger): Promise<void> {
    let messages: ConsumerMessages;
    try {
      // The stream carries only STUDIO_SUBJECT, so no filter (filter_subjects needs nats-server 2.10).
      const consumer = await jetstream(nc).consumers.get(STUDIO_STREAM, { deliver_policy: DeliverPolicy.All });
      if (this.#stopped) return;
      messages = await consumer.consume();
      this.#messages = messages;
    } catch (error) {
      log.warn(`studio: the team's list of recordings cannot be read (${describeError(error)}).`);
      return;
    }
    void (async () => {
      try {
        for await (const m of messages) {
          const a = parseAnnouncement(m.data);
          if (!a) continue;
          this.#byIdentity.delete(a.identity);
          this.#byIdentity.set(a.identity, a);
          if (this.#byIdentity.size > CATALOGUE_LIMIT) {
            this.#byIdentity.delete(this.#byIdentity.keys().next().value!);
          }
          // The backlog is read in one go: one change when it is caught up, then one per new announcement.
          if (m.info.pending === 0) this.emit('changed');
        }
      } catch (error) {
        if (!this.#stopped) log.warn(`studio: the team's list of recordings stopped (${describeError(error)}).`);
      }
    })();
  }

  /** Oldest first. */
  list(): Announcement[] {
    return [...this.#byIdentity.values()];
  }

  get(identity: string): Announcement | undefined {
    return this.#byIdentity.get(identity);
  }

  stop(): void {
    this.#stopped = true;
    void this.#messages?.close();
  }
}
