/**
 * The one domain model of a channel, whichever endpoint it came from. The live list says `id`,
 * ISO strings and a current watcher count; search says `chid`, epoch seconds and a cumulative session
 * count. Both become a `Channel`; the two counts stay distinct because they mean different things.
 */
import type { ChannelJson } from './view-shapes.js';

/** A channel, from either endpoint. */
export interface Channel {
  /** Channel ID exactly as the service gave it (hostile text: never assume a format). */
  id: string;
  /** Owning service ID when the endpoint reports it (the live list does, search does not). */
  serviceId: string | null;
  state: 'live' | 'ended';
  createdAt: Date;
  /** Null while live. */
  endedAt: Date | null;
  /** Sessions watching at the time of the query (live list only). */
  watchers: number | null;
  /** Cumulative sessions over the channel's life (search only). */
  cumulativeSessions: number | null;
}

/** JSON form used by `--json`, IPC and WebSocket (declared in view-shapes.ts, the contract's `ChannelView`). */
export type { ChannelJson } from './view-shapes.js';

export function channelToJson(c: Channel): ChannelJson {
  return {
    id: c.id,
    serviceId: c.serviceId,
    state: c.state,
    createdAt: c.createdAt.toISOString(),
    endedAt: c.endedAt ? c.endedAt.toISOString() : null,
    durationSeconds: c.endedAt ? Math.max(0, Math.round((c.endedAt.getTime() - c.createdAt.getTime()) / 1000)) : null,
    watchers: c.watchers,
    cumulativeSessions: c.cumulativeSessions,
  };
}

export interface SearchResult {
  /** Start of the searched period as the service echoed it. */
  startTime: Date;
  /** The service's clock at the time of the answer. */
  currentTime: Date;
  totalCount: number;
  channels: Channel[];
}

/** Project credentials. The secret must never reach logs, errors, settings files or the renderer. */
export interface Credentials {
  serviceId: string;
  secret: string;
}
