/**
 * A studio member's events as a face prints them (`tally follow`): the payload types of the member's event stream
 * a printer reads, declared here as the part of the follower's events a face may see (a face imports no domain
 * folder: eslint/boundaries.js, `domain`), as receive-events.ts does for the receive service.
 */
import type { FollowerEvents, FollowerSaved } from '../studio/follower.js';

/** Connected and mirroring: this member's name, the team server and the folder. */
export type MemberReady = Pick<FollowerEvents['ready'][0], 'name' | 'url' | 'folder'>;

/** A recording being mirrored. */
export type MirrorProgressed = Pick<FollowerEvents['progress'][0], 'identity' | 'channelId' | 'bytes' | 'totalBytes'>;

/** A recording mirrored into the folder, byte-identical. */
export type RecordingMirrored = Pick<FollowerSaved, 'identity' | 'channelId' | 'kind' | 'path' | 'bytes'>;

/** A mirror attempt that failed, and whether it is tried again. */
export type MirrorFailed = Pick<FollowerEvents['failed'][0], 'identity' | 'channelId' | 'message' | 'willRetry'>;
