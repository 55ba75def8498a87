/**
 * Connection slots under a slow-client flood (issue 10, finding 2): stalled webhook bodies, stalled uploads on
 * the (effectively public) upload route and slow headers fill every slot, and a genuine webhook is still
 * answered 200. Each slow request is known to be in progress on the server before the next step (a health
 * check answered after it, or the upload's part file opened), so the outcome does not depend on timing.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import { mountUploads, type UploadRejection } from '../uploads/upload-route.js';
import { WebhookReceiver } from './receiver.js';
import { TokenStore } from './token.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A raw client that sent `head` and then goes quiet; `answer` is what the server sent before closing. */
async function stalled(port: number, head: string): Promise<{ socket: Socket; answer: Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  cleanups.push(async () => socket.destroy());
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(data)));
  await once(socket, 'connect');
  socket.write(head);
  return { socket, answer };
}

function send(port: number, method: string, path: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.setHeader('Content-Type', 'application/json');
    req.end(body);
  });
}

it('keeps answering genuine webhooks while stalled webhook bodies, stalled uploads and slow headers hold every slot', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tally-slots-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const inbox = await Inbox.open(join(dir, 'state'));
  const receiver = new WebhookReceiver({
    inbox,
    tokens: await TokenStore.open(join(dir, 'state')),
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
    maxConnections: 12,
    // Long limits, as for uploads: only the slot handling stands between the flood and the genuine webhook.
    timeouts: { headersMs: 60_000, requestMs: 6 * 3_600_000, webhookBodyMs: 60_000 },
  });
  let partsOpened = 0;
  const partOpened: (() => void)[] = [];
  const route = await mountUploads(receiver, {
    folder: join(dir, 'recordings'),
    allowedOrigins: () => [],
    maxConcurrent: 5,
    // The stall rule's clock stands still: none of these is ever too slow to give way (upload-slots.spec.ts).
    clock: () => 0,
    wrapPart: (file) => {
      partsOpened += 1;
      partOpened.splice(0).forEach((resolve) => resolve());
      return file;
    },
  });
  const uploadRejections: UploadRejection[] = [];
  route.on('rejected', (r) => uploadRejections.push(r));
  await receiver.start();
  cleanups.push(async () => {
    await receiver.stop(1_000);
    await inbox.close();
  });
  const { port } = receiver;
  const uploadPath = receiver.routePath('uploads');

  // 7 webhook bodies that stop after a few bytes; the first one trickles on, so it is not the least useful.
  const webhookHead = `POST ${receiver.hookPath} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"id":`;
  const bodies = [];
  for (let i = 0; i < 7; i += 1) bodies.push(await stalled(port, webhookHead));
  bodies[0]?.socket.write('"');
  // Answered after all of the above reached the server: every body is now a request in progress.
  expect((await send(port, 'GET', receiver.healthPath)).status).toBe(200);

  // 5 uploads, the most allowed at once, each stalled after its first bytes once its part file is open.
  const uploadHead = `POST ${uploadPath} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: audio/ogg\r\nContent-Length: 100000\r\n\r\nOggS`;
  const uploads = [];
  for (let i = 0; i < 5; i += 1) {
    const opened = new Promise<void>((resolve) => partOpened.push(resolve));
    uploads.push(await stalled(port, uploadHead));
    await opened;
  }
  expect(partsOpened).toBe(5);

  // Every slot is now a request in progress. Slow headers arrive on top (no token needed for those).
  const slowHeaders = [];
  for (let i = 0; i < 2; i += 1) slowHeaders.push(await stalled(port, 'POST /hooks/guess HTTP/1.1\r\nHost: x\r\n'));

  // A sixth upload is refused with a clear reason instead of taking a slot for hours.
  const sixth = await stalled(port, uploadHead);
  expect(await sixth.answer).toMatch(/^HTTP\/1\.1 503 [^]*Retry-After: 60[^]*5 uploads are already in progress/i);
  expect(uploadRejections.map((r) => [r.status, r.recording])).toEqual([[503, true]]);

  const url = 'https://s3.amazonaws.com/svc/R1/genuine.mp4';
  const genuine = await send(port, 'POST', receiver.hookPath, JSON.stringify({ id: 'genuine', url }));
  expect(genuine.status, genuine.text).toBe(200);
  expect(inbox.list().map((j) => j.channelId)).toEqual(['genuine']);

  // Room was made by the body that stalled longest (not the one still trickling) and then by slow headers.
  await Promise.all([bodies[1]?.answer, slowHeaders[0]?.answer]);
  // The trickling body and the uploads kept their slots: they finish and are answered.
  const rest = 'trickled","url":"https://s3.amazonaws.com/svc/R0/trickled.mp4"}';
  bodies[0]?.socket.write(rest.padEnd(500 - '{"id":"'.length));
  expect(await bodies[0]?.answer).toMatch(/^HTTP\/1\.1 200 /);
  uploads[0]?.socket.write(Buffer.alloc(100_000 - 'OggS'.length));
  expect(await uploads[0]?.answer).toMatch(/^HTTP\/1\.1 201 /);
  expect(uploads.slice(1).every((u) => !u.socket.destroyed)).toBe(true);
});
