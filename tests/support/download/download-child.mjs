// TEST FIXTURE: runs one downloadFile in its own process so a spec can SIGKILL it mid-download.
// argv[2] is a JSON config; the engine is the transpiled copy the spec prepared (see kill-resume.spec.ts).
// Every line on stdout is one JSON event: {"type":"progress","bytes":n} ... {"type":"done",...}.
import { pathToFileURL } from 'node:url';

const config = JSON.parse(process.argv[2] ?? '{}');
const { downloadFile } = await import(pathToFileURL(config.engine).href);

const send = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

try {
  const rssBeforeBytes = process.memoryUsage().rss;
  const result = await downloadFile({
    url: config.url,
    dest: config.dest,
    partPath: config.partPath,
    policy: { checkRedirect: (from, location) => ({ ok: true, url: new URL(location, from) }) },
    segments: config.segments ?? 4,
    segmentThresholdBytes: config.segmentThresholdBytes ?? 32 * 1024 * 1024,
    checkpointIntervalMs: config.checkpointIntervalMs ?? 1000,
    minSplitBytes: config.minSplitBytes ?? 4 * 1024 * 1024,
    ...(config.rampWindowMs !== undefined ? { rampWindowMs: config.rampWindowMs } : {}),
    ...(config.splitBelowBytesPerSec !== undefined ? { splitBelowBytesPerSec: config.splitBelowBytesPerSec } : {}),
    progressIntervalMs: config.progressIntervalMs ?? 250,
    onProgress: config.reportProgress ? (p) => send({ type: 'progress', bytes: p.bytes }) : undefined,
  });
  send({ type: 'done', result, rssBeforeBytes, maxRssBytes: process.resourceUsage().maxRSS * 1024 });
} catch (error) {
  send({ type: 'error', name: error?.name, message: error?.message });
  process.exitCode = 1;
}
