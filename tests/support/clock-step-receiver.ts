/**
 * TEST HELPER (not used by the app): the receive service of `tally listen` (ReceiveService + RecordingPipeline
 * from dist/, as the CLI runs them) in a child process of its own, so that a test can run it under libfaketime
 * and step its wall clock while the origin, in the test's process, keeps the real time. Unlike `tally listen` it
 * takes the download queue's test seams (short retry waits and stall windows) so each clock step shows within
 * seconds. One JSON line per event on stdout:
 *
 *   ready {url}                        the receiver's local webhook URL
 *   received / saved / expired {key, state, deadline, error}
 *   failed {key, state, deadline, error, nextAttemptAt}
 *   progress {key, bytes}              (at most every 200 ms)
 *   health {state, downloads}          every change of the judged health (downloads: state and reason)
 *   wall {now}                         on a line `wall` on stdin: the wall clock as this process reads it
 *
 * Run as `node tests/support/clock-step-receiver.ts '<json config>'` (Node strips the types); SIGTERM stops it.
 */
import { createInterface } from 'node:readline';
import type * as UrlPolicyModule from '../../electron/core/net/url-policy.js';
import type * as ReceiveServiceModule from '../../electron/core/receive/receive-service.js';
import type { RecordingJob } from '../../electron/core/recordings/types.js';

interface Config {
  home: string;
  folder: string;
  origins: string[];
  retryBaseMs: number;
  retryMaxMs: number;
  stallRule: { bytesPerSec: number; windowMs: number };
}

const dist = (module: string) => new URL(`../../dist/electron/core/${module}`, import.meta.url).href;
const { ReceiveService } = (await import(dist('receive/receive-service.js'))) as typeof ReceiveServiceModule;
const { DownloadOriginPolicy } = (await import(dist('net/url-policy.js'))) as typeof UrlPolicyModule;

const config = JSON.parse(process.argv[2] ?? '{}') as Config;
const say = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
const job = (j: RecordingJob) => ({ key: j.key, state: j.state, deadline: j.deadline, error: j.error });

const service = new ReceiveService({ face: 'listen', home: config.home, log: () => undefined, recheckMs: 200 });
service.on('health', (view) => {
  const downloads = view.components.find((c) => c.id === 'downloads');
  say({ type: 'health', state: view.state, downloads: { state: downloads?.state, reason: downloads?.reason } });
});
await service.start();
let lastProgress = 0;
const opened = await service.open(
  {
    stateDir: `${config.home}/state`,
    folder: config.folder,
    policy: new DownloadOriginPolicy(config.origins),
    port: 0,
    retryBaseMs: config.retryBaseMs,
    retryMaxMs: config.retryMaxMs,
    stallRule: config.stallRule,
  },
  {
    paused: false,
    demo: false,
    attach: (pipeline) => {
      pipeline.on('received', (j) => say({ type: 'received', ...job(j) }));
      pipeline.on('saved', (e) => say({ type: 'saved', ...job(e.job), path: e.path, bytes: e.bytes }));
      pipeline.on('expired', (e) => say({ type: 'expired', ...job(e.job) }));
      pipeline.on('failed', (e) => say({ type: 'failed', ...job(e.job), nextAttemptAt: e.nextAttemptAt }));
      pipeline.on('progress', (e) => {
        const now = performance.now();
        if (now - lastProgress < 200) return;
        lastProgress = now;
        say({ type: 'progress', key: e.key, bytes: e.bytes });
      });
      return () => undefined;
    },
  },
);
say({ type: 'ready', url: opened.pipeline.receiver.localUrl });

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'wall') say({ type: 'wall', now: new Date().toISOString() });
});
process.once('SIGTERM', () => {
  void service.stop().then(() => process.exit(0));
});
