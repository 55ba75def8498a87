/**
 * The Node floor for a download: `http.get(url).pipe(fs.createWriteStream(out))` and an fsync, nothing else
 * (no ranges, no resume, no sidecar, no verification). Run as a child like our engine, so the gap between the
 * two is what Tally's safety costs, and the gap between this and curl is what Node itself costs.
 * Usage: node node-pipe.mjs <url> <out>; prints `{ms, bytes, peakRssMb}`.
 */
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';

const [url = '', out = ''] = process.argv.slice(2);
const started = performance.now();
const res = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, resolve).once('error', reject));
if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
const sink = createWriteStream(out);
await pipeline(res, sink);
const handle = await open(out, 'r+');
await handle.sync();
await handle.close();
const ms = performance.now() - started;
const result = { ms, bytes: sink.bytesWritten, peakRssMb: process.resourceUsage().maxRSS / 1024 };
process.stdout.write(`${JSON.stringify(result)}\n`);
