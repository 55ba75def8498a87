/**
 * What the studio's receiver does for one saved file, without a receiver: put it into the team's Object Store
 * and announce it on the stream (and in the team's index), so member-side tests have something to mirror.
 */
import { readFile } from 'node:fs/promises';
import { connect } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import type { Announcement } from '../../electron/core/studio/announcement.js';
import { indexAnnouncement } from '../../electron/core/studio/shared-index.js';
import { NatsTeamStore } from '../../electron/core/studio/store.js';
import { DEFAULT_RETENTION_MS, STUDIO_SUBJECT, ensureStudioStream } from '../../electron/core/studio/team.js';

export async function announceRecording(
  url: string,
  file: string,
  channelId: string,
  token?: string,
): Promise<Announcement> {
  const nc = await connect({ servers: url.replace('nats://', ''), ...(token ? { token } : {}) });
  try {
    await ensureStudioStream(nc, { retentionMs: DEFAULT_RETENTION_MS, owner: true });
    const bytes = (await readFile(file)).length;
    const put = await new NatsTeamStore(nc, { retentionMs: DEFAULT_RETENTION_MS }).put({
      identity: `rec-${channelId}`,
      path: file,
      bytes,
    });
    const a: Announcement = {
      v: 1,
      identity: `rec-${channelId}`,
      kind: 'server',
      channelId,
      fileName: `${channelId}.mp4`,
      bytes,
      sha256: put.sha256,
      savedAt: new Date().toISOString(),
      store: put.ref,
    };
    const ack = await jetstream(nc).publish(STUDIO_SUBJECT, JSON.stringify(a), { msgID: a.identity });
    // Kept in the team's index by its stream sequence, as the receiver does (a member back too late learns of it).
    await indexAnnouncement(nc, ack.seq, a, DEFAULT_RETENTION_MS);
    return a;
  } finally {
    await nc.close();
  }
}
