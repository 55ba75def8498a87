/**
 * One origin download per recording per studio (issue 31): the studio's side of the download queue's claims
 * (pipeline/download-manager-types.ts DownloadClaims). A receiver claims a recording before downloading it; a
 * receiver that finds another's live claim waits for that receiver's publish and saves the published copy from
 * the team store into its own folder, verified (mirror-file.ts), or downloads it itself once the claim lapses
 * (the claimant died). The team server not answering never holds a download up.
 */
import { describeError, silentLogger, type Logger } from '../logger.js';
import type { ClaimAnswer, DownloadClaims } from '../pipeline/download-manager.js';
import type { RecordingJob } from '../recordings/types.js';
import { serverIdentity, type Announcement } from './announcement.js';
import { mirrorRecording, removePart, targetFolder } from './mirror-file.js';
import type { StudioPublisher } from './publisher.js';

export class StudioDownloadClaims implements DownloadClaims {
  readonly #publisher: StudioPublisher;
  readonly #log: Logger;
  /** Recordings whose published copy could not be saved here: downloaded from the origin instead. */
  readonly #unsaved = new Set<string>();

  constructor(publisher: StudioPublisher, log: Logger = silentLogger) {
    this.#publisher = publisher;
    this.#log = log;
  }

  async claim(job: RecordingJob, folder: string, signal: AbortSignal): Promise<ClaimAnswer> {
    const identity = serverIdentity(job.key);
    const first = await this.#ask(identity);
    if (first.state === 'mine' || first.state === 'offline') return { go: 'download' };
    const announcement = first.state === 'published' ? first.announcement : null;
    // Published without what was announced (an older receiver), or its copy could not be saved here before.
    if (first.state === 'published' && (!announcement || this.#unsaved.has(identity))) return { go: 'download' };
    return { go: 'wait', settled: this.#settle(identity, folder, signal, announcement) };
  }

  release(job: RecordingJob): void {
    this.#publisher.releaseDownload(serverIdentity(job.key));
  }

  /** The claim as it stands; a team server that cannot be asked counts as offline (downloaded here). */
  async #ask(identity: string): ReturnType<StudioPublisher['claimDownload']> {
    return this.#publisher.claimDownload(identity).catch((error: unknown) => {
      this.#log.warn(`studio: could not ask who downloads ${identity} (${describeError(error)}); downloading it here.`);
      return { state: 'offline' as const };
    });
  }

  /** Waits for the claimant: its copy saved here, or null to download here (claim lapsed, or no copy to take). */
  async #settle(
    identity: string,
    folder: string,
    signal: AbortSignal,
    published: Announcement | null,
  ): Promise<{ path: string; bytes: number } | null> {
    let announcement = published;
    while (!announcement) {
      await this.#publisher.claimChanged(identity, signal);
      if (signal.aborted) return null;
      const now = await this.#ask(identity);
      if (now.state === 'taken') continue;
      if (now.state !== 'published' || !now.announcement) {
        // Ours now (the claimant's claim lapsed): the download goes on under it.
        return null;
      }
      announcement = now.announcement;
    }
    const store = this.#publisher.store;
    if (!store) return null;
    try {
      const copy = await mirrorRecording({ store, folder, announcement, signal });
      // The final name holds the bytes now (the part is a second link to them, or gone): its records go.
      await removePart(await targetFolder({ folder, announcement }), announcement);
      return copy;
    } catch (error) {
      if (signal.aborted) return null;
      this.#unsaved.add(identity);
      this.#log.warn(
        `studio: ${announcement.channelId} could not be saved from the team store (${describeError(error)}); downloading it here.`,
      );
      return null;
    }
  }
}
