/**
 * A studio receiver's link to its team, judged from its publisher's events: connecting, connected (or connected
 * with standing warnings), unreachable, refused, and never green while a saved recording has been failing to reach
 * the team store for SHARE_STUCK_MS (a cluster that lost its majority still accepts the connection, and refuses
 * every recording). The receive service runs one beside each publisher, reads it for the health and hands it to
 * the face with the publisher (issue 35: the studio link is judged here, in studio/, and pushed, never asked for).
 */
import { EventEmitter } from 'node:events';
import { errorNote, nested, note, type Note } from '../notes.js';
import type { StudioPublisher } from './publisher.js';
import type { StudioLink } from './studio-link.js';

/** A saved recording not shared with the team this long after its first failed attempt turns the studio amber. */
export const SHARE_STUCK_MS = 20_000;

export interface PublisherLinkOptions {
  /** The tray app says how to fix things in Settings, `tally listen` with flags and commands. */
  app: boolean;
  now: () => number;
  /** How long a saved recording may fail to reach the team store before the link turns amber (SHARE_STUCK_MS). */
  shareStuckMs?: number;
}

export interface PublisherLinkEvents {
  /** Something the link is judged from changed: read `current()` again. */
  changed: [];
}

export class PublisherLink extends EventEmitter<PublisherLinkEvents> {
  readonly #publisher: StudioPublisher;
  readonly #opts: PublisherLinkOptions;
  #link: StudioLink = { state: 'connecting', reason: [] };
  /** Standing warnings (by kind), said while connected. */
  readonly #warnings = new Map<string, Note>();
  /** Recordings the publisher failed to share, since when and why (until shared): "connected" is not all. */
  readonly #shareFailures = new Map<string, { since: number; message: string }>();

  constructor(publisher: StudioPublisher, opts: PublisherLinkOptions) {
    super();
    this.#publisher = publisher;
    this.#opts = opts;
    const app = opts.app;
    const said = (text: string): Note => errorNote({ message: text });
    const connectedOrWarned = () => {
      const warned = [...this.#warnings.values()];
      this.set(warned.length > 0 ? 'warning' : 'connected', warned);
    };
    publisher.on('connected', connectedOrWarned);
    publisher.on('connection', (state) => {
      if (state === 'reconnected') return connectedOrWarned();
      // A server that stopped answering stays named while the client moves to another one.
      const unanswered = publisher.answer?.answering === false ? publisher.answer.note : null;
      this.set('unreachable', [unanswered ?? note('teamConnectionLost')]);
    });
    // A connection open while nothing answers on it (a hung server, a cluster that cannot store) is not green.
    publisher.on('answering', (a) =>
      a.answering ? connectedOrWarned() : this.set('unreachable', a.note ? [a.note] : []),
    );
    publisher.on('waiting', (info) => this.set('unreachable', [app && info.note ? info.note : said(info.message)]));
    publisher.on('refused', ({ error }) => this.set('error', [app ? error.appNote : said(error.message)]));
    publisher.on('warning', (w) => {
      this.#warnings.set(w.kind, app && w.note ? w.note : said(w.message));
      if (this.#link.state === 'connected' || this.#link.state === 'warning') connectedOrWarned();
    });
    publisher.on('warningCleared', (kind) => {
      if (!this.#warnings.delete(kind)) return;
      if (this.#link.state === 'connected' || this.#link.state === 'warning') connectedOrWarned();
    });
    publisher.on('failed', (f) => {
      const since = this.#shareFailures.get(f.identity)?.since ?? this.#opts.now();
      this.#shareFailures.set(f.identity, { since, message: f.message });
      this.emit('changed');
    });
    const shared = (e: { identity: string }) => {
      if (this.#shareFailures.delete(e.identity)) this.emit('changed');
    };
    publisher.on('published', shared);
    publisher.on('alreadyShared', shared);
  }

  /** Sets the link's state and reason (the publisher's events do; the service too when it cannot start). */
  set(state: StudioLink['state'], reason: Note[]): void {
    this.#link = { state, reason };
    this.emit('changed');
  }

  /**
   * The link as the health shows it at `now`: connected is green only while no saved recording has been failing
   * to reach the team store for SHARE_STUCK_MS.
   */
  current(now: number = this.#opts.now()): StudioLink {
    const link = this.#link;
    // Unreachable too: a cluster that does not answer is said, and so are the recordings waiting on it.
    if (link.state !== 'connected' && link.state !== 'warning' && link.state !== 'unreachable') return link;
    const stuckMs = this.#opts.shareStuckMs ?? SHARE_STUCK_MS;
    let stuck = [...this.#shareFailures.entries()].filter(([, f]) => now - f.since >= stuckMs);
    if (stuck.length === 0) return link;
    // Only those still queued (a recording whose file went away meanwhile is dropped, with a log line).
    const queued = (identity: string) => this.#publisher.isQueued(identity);
    for (const [identity] of stuck) if (!queued(identity)) this.#shareFailures.delete(identity);
    stuck = stuck.filter(([identity]) => queued(identity));
    if (stuck.length === 0) return link;
    const latest = stuck.map(([, f]) => f).reduce((a, b) => (b.since > a.since ? b : a));
    const reason = /jetstream (is )?not enabled|no responders/i.test(latest.message)
      ? note('studioClusterCannotStore')
      : errorNote({ message: latest.message });
    const stuckNote = note('studioSharesStuck', {
      count: stuck.length,
      seconds: Math.round(stuckMs / 1000),
      ...nested('reason', reason),
    });
    return { state: link.state === 'unreachable' ? 'unreachable' : 'warning', reason: [...link.reason, stuckNote] };
  }
}
