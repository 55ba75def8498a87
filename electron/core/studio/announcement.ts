/**
 * What the receiver announces for every recording it has put in the team store, and what a follower accepts:
 * an announcement crosses a trust boundary (anyone with the team's credentials can publish), so it is parsed
 * with zod and its file name is made safe again on the follower's side.
 */
import { z } from 'zod';

/** Where the bytes are: the JetStream Object Store bucket, or an S3 bucket and key. */
export const storedRefSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('nats'), bucket: z.string().min(1).max(64), name: z.string().min(1).max(256) }),
  z.object({ kind: z.literal('s3'), bucket: z.string().min(1).max(255), key: z.string().min(1).max(1024) }),
]);
export type StoredRef = z.infer<typeof storedRefSchema>;

export const announcementSchema = z.object({
  v: z.literal(1),
  /** The recording's identity: `rec-<job key>` for server recordings, `upl-<upload id>` for client uploads. */
  identity: z.string().regex(/^(rec|upl)-[A-Za-z0-9_-]{1,64}$/),
  kind: z.enum(['server', 'client']),
  channelId: z.string().min(1).max(256),
  /** The file name on the receiver (a hint: followers make it safe and pick a free name themselves). */
  fileName: z.string().min(1).max(512),
  bytes: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  savedAt: z.string().min(1).max(64),
  store: storedRefSchema,
});
export type Announcement = z.infer<typeof announcementSchema>;

/** The announcement in `data`, or null when it is not one (logged and acknowledged, never retried). */
export function parseAnnouncement(data: Uint8Array): Announcement | null {
  try {
    const parsed = announcementSchema.safeParse(JSON.parse(Buffer.from(data).toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The identity of a saved server recording (its inbox key) or of a client upload (its upload id). */
export function serverIdentity(jobKey: string): string {
  return `rec-${jobKey}`;
}
export function uploadIdentity(uploadId: string): string {
  return `upl-${uploadId}`;
}
