/**
 * How the Recordings list reads like a studio day: a web client's recordings are listed under the broadcast
 * they were made in (their channel's server recording). Plain functions of RecordingView lists.
 */
import type { RecordingView } from '../../../electron/contract.js';

/** The server recording each client recording belongs to: the newest one of its channel, if listed. */
function parentsOf(list: readonly RecordingView[]): Map<string, RecordingView> {
  const broadcasts = new Map<string, RecordingView>();
  for (const r of list)
    if (r.source === 'server' && r.channelId && !broadcasts.has(r.channelId)) broadcasts.set(r.channelId, r);
  const parents = new Map<string, RecordingView>();
  for (const r of list) {
    const parent = r.source === 'client' && r.channelId ? broadcasts.get(r.channelId) : undefined;
    if (parent) parents.set(r.key, parent);
  }
  return parents;
}

/**
 * Newest first, as a studio day reads: each broadcast's recording, then the web client's recordings made in it
 * (local stream before remote); client recordings of a channel with no broadcast recording listed stay in place.
 */
export function underTheirBroadcast(list: readonly RecordingView[]): RecordingView[] {
  const parents = parentsOf(list);
  const children = new Map<string, RecordingView[]>();
  for (const [key, parent] of parents) {
    const child = list.find((r) => r.key === key);
    if (child) children.set(parent.key, [...(children.get(parent.key) ?? []), child]);
  }
  const trackOrder = (r: RecordingView) => (r.track === 'local' ? 0 : r.track === 'remote' ? 1 : 2);
  const out: RecordingView[] = [];
  for (const r of list) {
    if (parents.has(r.key)) continue;
    out.push(r);
    const mine = children.get(r.key);
    if (mine) out.push(...[...mine].sort((a, b) => trackOrder(a) - trackOrder(b)));
  }
  return out;
}

export function nestedKeys(list: readonly RecordingView[]): Set<string> {
  return new Set(parentsOf(list).keys());
}
