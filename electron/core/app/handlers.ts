/**
 * The contract requests about channels and recordings: thin over the service client and the pipeline
 * host, so the app core keeps only what changes its own state (settings, credentials, mode).
 */
import type { ChannelView, RequestHandlers } from '../../contract.js';
import type { ChannelApi } from '../api-client.js';
import { ConfigError, ValidationError } from '../errors.js';
import { channelToJson, type Channel } from '../model.js';
import { fetchThumbnail } from '../download/thumbnail.js';
import type { RecordingPipeline } from '../pipeline/pipeline.js';
import { hasMediaExt } from '../recordings/filename.js';
import type { RecordingJob } from '../recordings/types.js';
import { describe } from './core-messages.js';
import type { PipelineHost } from './pipeline-host.js';
import type { PlatformHooks } from './types.js';

/** What these handlers need from the core. */
export interface HandlerContext {
  /** The service client, or a ConfigError saying why there is none. */
  api(): ChannelApi;
  /** Notes refused credentials on the way through. */
  track<T>(promise: Promise<T>): Promise<T>;
  /** The running pipeline, or a ConfigError saying why there is none. */
  pipeline(): RecordingPipeline;
  host: PipelineHost;
  hooks: PlatformHooks;
  log(line: string): void;
  /** A fresh live list fetched on request: the tray shows it too. */
  setLive(channels: Channel[]): void;
  /** Polls the live list now (after a poll already running). */
  refreshLive(): Promise<void>;
  updateTray(): void;
}

type Handled =
  | 'channels:live'
  | 'channels:search'
  | 'channels:end'
  | 'recordings:list'
  | 'recordings:retry'
  | 'recordings:reveal'
  | 'recordings:open'
  | 'recordings:path'
  | 'recordings:thumbnail'
  | 'recordings:remove'
  | 'recordings:gaps'
  | 'clipboard:write';

/** Thumbnails kept in memory (a page of the list and then some); the oldest is dropped first. */
const THUMBNAIL_CACHE = 100;

export function channelAndRecordingHandlers(ctx: HandlerContext): Pick<RequestHandlers, Handled> {
  const { hooks } = ctx;
  const thumbnails = new Map<string, Promise<string | null>>();
  const withSavedFile = async (
    key: string,
    hook: ((path: string) => Promise<void> | void) | undefined,
  ): Promise<{ ok: boolean }> => {
    const path = ctx.host.savedPath(key);
    if (!hook || !path) return { ok: false };
    try {
      await hook(path);
      return { ok: true };
    } catch (error) {
      ctx.log(`could not show a recording: ${describe(error)}`);
      return { ok: false };
    }
  };
  return {
    'channels:live': async (): Promise<ChannelView[]> => {
      const channels = await ctx.track(ctx.api().listLive());
      ctx.setLive(channels);
      return channels.map(channelToJson);
    },

    'channels:search': async (query) => {
      const api = ctx.api();
      const result = await ctx.track(
        api.search({
          since: new Date(query.since),
          until: new Date(query.until),
          ...(query.keyword ? { keyword: query.keyword } : {}),
        }),
      );
      return {
        totalCount: result.totalCount,
        channels: result.channels.map(channelToJson),
        truncated: result.truncated,
      };
    },

    'channels:end': async (channelId) => {
      await ctx.track(ctx.api().endChannel(channelId));
      // Named, as a producer reading the log asks "which one?"; quoted so a hostile ID cannot forge a line.
      ctx.log(`channel ${JSON.stringify(channelId.slice(0, 200))} was force-ended`);
      // The list pushed next must not show the ended channel: refresh waits out a poll already running.
      await ctx.refreshLive();
      return { ended: true };
    },

    'recordings:list': async () => ctx.host.list(),

    'recordings:retry': async (key) => {
      const pipeline = ctx.pipeline();
      if (!pipeline.inbox.get(key)) throw new ValidationError(['key'], 'No recording with this key is known.');
      await pipeline.downloads.retry(key);
      // The row may stand for twins (one recording in both webhook forms): the other is tried again too.
      const twin = pipeline.inbox.twinOf(key);
      if (twin !== undefined) await pipeline.downloads.retry(twin);
      ctx.updateTray();
      return ctx.host.viewOf(pipeline.inbox.get(key) as RecordingJob);
    },

    'recordings:reveal': async (key) => withSavedFile(key, hooks.revealFile?.bind(hooks)),
    'recordings:open': async (key) => {
      const openFile = hooks.openFile?.bind(hooks);
      // Opening hands the file to the desktop: only a media file may be launched, whatever its name became.
      return withSavedFile(
        key,
        openFile &&
          (async (file: string) => {
            if (!hasMediaExt(file)) throw new ConfigError('Tally opens recordings only (video and audio files).');
            await openFile(file);
          }),
      );
    },
    'recordings:path': async (key) => ({ path: ctx.host.savedPath(key) }),
    'recordings:thumbnail': async (key) => {
      const pipeline = ctx.host.pipeline;
      const job = pipeline?.inbox.get(key);
      // A row of twins (one recording in both webhook forms): the legacy form may have come without a thumbnail.
      const twin = job ? pipeline?.inbox.standing(job).twin : null;
      const url = job?.thumbnail ?? twin?.thumbnail;
      if (!pipeline || !url) return { dataUrl: null };
      let pending = thumbnails.get(key);
      if (!pending) {
        pending = fetchThumbnail(url, pipeline.policy);
        thumbnails.set(key, pending);
        // Only pictures are kept: a thumbnail that could not be fetched is tried again when next asked for.
        void pending.then((dataUrl) => dataUrl === null && thumbnails.delete(key));
        if (thumbnails.size > THUMBNAIL_CACHE) thumbnails.delete(thumbnails.keys().next().value as string);
      }
      return { dataUrl: await pending };
    },
    'recordings:remove': async (key) => ctx.host.remove(key),
    'recordings:gaps': async () => ctx.host.gaps(),

    'clipboard:write': async (text) => {
      if (!hooks.writeClipboard) return { ok: false };
      await hooks.writeClipboard(text);
      return { ok: true };
    },
  };
}
