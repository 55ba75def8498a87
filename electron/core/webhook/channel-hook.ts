/**
 * The service's channel lifecycle hook (admin API `webhook`, SERVICE-FACTS): `GET <url>?action=create&chid=<id>`
 * when a channel opens and `?action=close&chid=<id>` when it closes. The receiver takes it on its webhook path,
 * beside the recording webhook (whose GET shape carries `url` instead of `action`). It starts no download and is
 * never journalled: it only says a channel opened or closed.
 */

/** Longest channel ID taken from a lifecycle call (the docs allow 1024 characters; nothing enforces it). */
export const MAX_HOOK_CHANNEL_ID = 4096;

export interface ChannelHookCall {
  action: 'create' | 'close';
  channelId: string;
}

/**
 * The lifecycle call a query string makes, or null when it is not one (no `action`, an unknown action, a `url`
 * that makes it a recording webhook, or no usable channel ID).
 */
export function parseChannelHook(query: URLSearchParams): ChannelHookCall | null {
  const action = query.get('action');
  if (action !== 'create' && action !== 'close') return null;
  if (query.has('url')) return null;
  const channelId = (query.get('chid') ?? query.get('channelId') ?? query.get('id') ?? '').trim();
  if (channelId === '' || channelId.length > MAX_HOOK_CHANNEL_ID) return null;
  return { action, channelId };
}
