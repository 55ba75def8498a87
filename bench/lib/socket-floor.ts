/**
 * Node's floor for a download below `http` (issue 34): one GET over a plain `net` or `tls` socket whose reads land
 * in one reused 4 MiB buffer (`onread`), each written at its offset with `fs.writeSync`, then an fsync; no
 * streams, no parser callbacks, no per-chunk allocation. It asks for `Connection: close`, so the body is what
 * follows the head up to the end of the stream; the head's status and Content-Length are checked, nothing more
 * (a measuring stick for a trusted nginx on loopback, not a client). TLS verifies the server against the CA in
 * NODE_EXTRA_CA_CERTS, as Tally does. Usage: `node socket-floor.mjs <url> <out>`; prints
 * `{ms, bytes, cpu, peakRssMb}` (cpu: user + system seconds of the process over the span).
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { connect as netConnect, type OnReadOpts, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

const [url = '', out = ''] = process.argv.slice(2);
const target = new URL(url);
const secure = target.protocol === 'https:';
const port = Number(target.port || (secure ? 443 : 80));
const buffer = Buffer.allocUnsafe(4 << 20);
const fd = openSync(out, 'w');
const cpu = process.cpuUsage();
const started = performance.now();

let head: Buffer | null = Buffer.alloc(0);
let expected = -1;
let written = 0;

/** Writes `n` bytes of `chunk` from `at` at the file's next offset. */
function write(chunk: Buffer, at: number, n: number): void {
  for (let off = 0; off < n;) off += writeSync(fd, chunk, at + off, n - off, written + off);
  written += n;
}

const done = new Promise<void>((resolve, reject) => {
  const onread = {
    buffer,
    callback(n: number, buf: Uint8Array): boolean {
      const chunk = buf as Buffer;
      if (head === null) {
        write(chunk, 0, n);
        return true;
      }
      head = Buffer.concat([head, chunk.subarray(0, n)]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return true;
      const text = head.subarray(0, end).toString('latin1');
      if (!/^HTTP\/1\.1 200 /.test(text)) reject(new Error(`answered ${text.split('\r\n')[0]}`));
      expected = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? -1);
      const body = head.subarray(end + 4);
      head = null;
      write(body, 0, body.length);
      return true;
    },
  };
  const request = `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n\r\n`;
  const socket: Socket = secure
    ? // TLS sockets take `onread` too (the types do not say so).
      tlsConnect({ host: target.hostname, port, onread } as ConnectionOptions & { onread: OnReadOpts }, () =>
        socket.write(request),
      )
    : netConnect({ host: target.hostname, port, onread }, () => socket.write(request));
  socket.once('error', reject);
  socket.once('end', () => resolve());
});
await done;
fsyncSync(fd);
closeSync(fd);
const ms = performance.now() - started;
const used = process.cpuUsage(cpu);
if (written !== expected) throw new Error(`wrote ${written} bytes, the head said ${expected}`);
const result = {
  ms,
  bytes: written,
  cpu: (used.user + used.system) / 1e6,
  peakRssMb: process.resourceUsage().maxRSS / 1024,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
