/**
 * Bench helper (own process) for `webhook-long-fields`: a real WebhookReceiver + Inbox + TokenStore + origin
 * policy on a journal in `argv[2]`, the unfinished-jobs cap lifted. Prints `{"url":...,"readyMs":...}` once
 * listening (readyMs: from start to listening, the journal replay included); on `stop` on stdin it closes and
 * prints `{"stored":...,"peakRssMb":...}`.
 */
import { createInterface } from 'node:readline';
import { DownloadOriginPolicy } from '../../electron/core/net/url-policy.js';
import { Inbox } from '../../electron/core/recordings/inbox.js';
import { WebhookReceiver } from '../../electron/core/webhook/receiver.js';
import { TokenStore } from '../../electron/core/webhook/token.js';

const dir = process.argv[2] ?? '';
const started = performance.now();
const inbox = await Inbox.open(dir);
const tokens = await TokenStore.open(dir);
const receiver = new WebhookReceiver({
  inbox,
  policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
  tokens,
  maxUnfinishedJobs: Number.MAX_SAFE_INTEGER,
  maxConnections: 4096,
});
await receiver.start();
process.stdout.write(`${JSON.stringify({ url: receiver.localUrl, readyMs: performance.now() - started })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== 'stop') continue;
  await receiver.stop();
  const stored = inbox.keys().length;
  await inbox.close();
  process.stdout.write(`${JSON.stringify({ stored, peakRssMb: process.resourceUsage().maxRSS / 1e3 })}\n`);
  process.exit(0);
}
