/**
 * The sandbox side of the channel lifecycle hook (admin API `webhook`, SERVICE-FACTS): once a URL is set, every
 * broadcast start is announced as `GET <url>?action=create&chid=<id>` and every end as `?action=close&chid=<id>`,
 * both with `Content-Type: application/json` as the service sends them. No retries, like the recording webhook.
 * The close call goes out as the channel leaves the live list, before its recording is processed and its
 * recording webhook sent, as with the service.
 */
import type { EventEmitter } from 'node:events';
import { sendWebhookRequest, type WebhookRequest } from './webhook-sender.js';
import type { BroadcastInfo } from './types.js';

export interface ChannelHookDelivery {
  action: 'create' | 'close';
  channelId: string;
  /** The hook URL called (without the added query parameters). */
  url: string;
  status: number | null;
  error: string | null;
  at: Date;
}

/** `<url>?action=…&chid=…`, keeping any query the hook URL already has. */
export function channelHookUrl(url: string, action: 'create' | 'close', channelId: string): string {
  const target = new URL(url);
  target.searchParams.set('action', action);
  target.searchParams.set('chid', channelId);
  return target.href;
}

/**
 * Calls the hook on `broadcast:start` / `broadcast:end` of `events` and emits a `channel-hook` event with each
 * delivery. Returns the function that stops it.
 */
export function attachChannelHook(
  service: { readonly channelWebhookUrl: string | null; readonly events: EventEmitter; now(): Date },
  opts: { timeoutMs: number; signal: AbortSignal },
): () => void {
  const call = (action: 'create' | 'close', broadcast: BroadcastInfo): void => {
    const url = service.channelWebhookUrl;
    if (!url) return;
    const request: WebhookRequest = {
      method: 'GET',
      url: channelHookUrl(url, action, broadcast.id),
      headers: { 'Content-Type': 'application/json' },
      body: null,
    };
    void sendWebhookRequest(request, opts.timeoutMs, opts.signal).then(({ status, error }) => {
      const delivery: ChannelHookDelivery = { action, channelId: broadcast.id, url, status, error, at: service.now() };
      service.events.emit('channel-hook', delivery);
    });
  };
  const onStart = (b: BroadcastInfo): void => call('create', b);
  const onEnd = (b: BroadcastInfo): void => call('close', b);
  service.events.on('broadcast:start', onStart);
  service.events.on('broadcast:end', onEnd);
  return () => {
    service.events.off('broadcast:start', onStart);
    service.events.off('broadcast:end', onEnd);
  };
}
