/**
 * Test helpers for the one receive service: a pipeline opened with downloads paused and no face attached, and
 * the `saved` event a finished download emits (tests/studio.spec.ts downloads for real).
 */
import type { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import type { PipelineOptions } from '../../electron/core/pipeline/pipeline-types.js';
import type { OpenedPipeline, ReceiveService } from '../../electron/core/receive/receive-service.js';

/** Opens `service`'s pipeline under `dir` (state/, recordings/, any free port), downloads paused. */
export function openPaused(
  service: ReceiveService,
  dir: string,
  spec: Partial<PipelineOptions> = {},
): Promise<OpenedPipeline> {
  return service.open(
    {
      stateDir: join(dir, 'state'),
      folder: join(dir, 'recordings'),
      policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
      port: 0,
      ...spec,
    },
    { paused: true, demo: false, attach: () => () => undefined },
  );
}

/** Emits the pipeline's `saved` event for `file`, as a finished download of recording `key` does. */
export function emitSaved(
  pipeline: EventEmitter,
  file: string,
  recording: { key: string; channelId: string; bytes: number },
): void {
  pipeline.emit('saved', {
    job: { key: recording.key, channelId: recording.channelId, updatedAt: new Date().toISOString() },
    path: file,
    bytes: recording.bytes,
  });
}
