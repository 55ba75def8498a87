/**
 * A producer's day of recordings for the Recordings screenshot: named channels that arrived at different
 * times, each really published by the demo sandbox and really downloaded and verified by the core. Only the
 * arrival time is set by the test: the journal is handed each recording as the webhook would have handed it,
 * hours earlier (the webhook itself always stamps the present).
 */
import type { PopoverHarness } from './popover-harness.js';

const MIN = 60_000;

/**
 * Oldest first; all within the service's 6 hours, so none has expired. Names of their own: a sandbox
 * channel ID is used once, and the Live and Search screenshots use others.
 */
export const STUDIO_DAY = [
  { id: 'breakfast-news', minutesAgo: 290, bytes: 2_400_000 },
  { id: 'cooking-live', minutesAgo: 215, bytes: 900_000 },
  { id: 'panel-discussion', minutesAgo: 150, bytes: 1_800_000 },
  { id: 'product-demo', minutesAgo: 85, bytes: 1_200_000 },
  { id: 'lunchtime-qa', minutesAgo: 30, bytes: 700_000 },
] as const;

/** Clears the list of earlier tests' recordings (their files stay) and saves the studio day's. */
export async function seedStudioDay(h: PopoverHarness): Promise<void> {
  const pipeline = h.pipeline();
  for (const r of await h.core.handlers['recordings:list']()) await h.core.handlers['recordings:remove'](r.key);

  const saved = new Set<string>();
  const allSaved = new Promise<void>((resolve, reject) => {
    const onChange = (job: { channelId: string; state: string; error: string | null }) => {
      if (job.state === 'failed' || job.state === 'expired') {
        pipeline.off('changed', onChange);
        reject(new Error(`${job.channelId} was not saved: ${job.error}`));
      }
      if (job.state === 'saved') saved.add(job.channelId);
      if (saved.size < STUDIO_DAY.length) return;
      pipeline.off('changed', onChange);
      resolve();
    };
    pipeline.on('changed', onChange);
  });

  const { control } = h.sandbox;
  for (const { id, minutesAgo, bytes } of STUDIO_DAY) {
    const arrived = new Date(Date.now() - minutesAgo * MIN);
    control.startBroadcast({
      id,
      record: true,
      recordingBytes: bytes,
      watchers: 40,
      createdAt: new Date(arrived.getTime() - 45 * MIN),
    });
    const recording = await control.endBroadcast(id, { sendWebhook: false });
    if (!recording) throw new Error(`the sandbox published no recording for ${id}`);
    await pipeline.inbox.add(
      {
        channelId: id,
        url: recording.url,
        announcedBytes: recording.size,
        duration: String(recording.durationSeconds),
        thumbnail: recording.thumbnailUrl,
        shape: 'json',
      },
      arrived,
    );
  }
  await allSaved;
}
