/**
 * A 413 that arrives (issue 32, finding 5): a sender that writes its whole oversized webhook before it reads
 * anything gets the status, not a reset. The receiver answers at once and then reads and drops the rest of the
 * body before closing (lingering close), so the kernel never resets a connection with unread bytes in it.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LINGER_MAX_BYTES } from '../http-answer.js';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { Inbox } from '../recordings/inbox.js';
import { WebhookReceiver } from './receiver.js';
import { TokenStore } from './token.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<WebhookReceiver> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-linger-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const inbox = await Inbox.open(join(dir, 'state'));
  const r = new WebhookReceiver({
    inbox,
    tokens: await TokenStore.open(join(dir, 'state')),
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
  });
  await r.start();
  cleanups.push(async () => {
    await r.stop(1_000);
    await inbox.close();
  });
  return r;
}

/**
 * A raw client that writes the request head and the whole body, waits until every byte is handed to the
 * kernel, and only then reads: what it read before the connection closed, and the socket error if any.
 */
async function writeAllThenRead(
  port: number,
  head: string,
  body: Buffer,
): Promise<{ text: string; error: string | null }> {
  const socket = connect(port, '127.0.0.1');
  // Paused before it connects, the socket takes nothing from the kernel until the body is written (Node would
  // otherwise read ahead into its own buffer, which no sender of this kind does).
  socket.pause();
  let error: string | null = null;
  socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await once(socket, 'connect');
  await new Promise<void>((resolve) => {
    socket.write(head);
    socket.write(body, () => resolve());
  });
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.resume();
  await closed;
  return { text: Buffer.concat(chunks).toString('latin1'), error };
}

it('a 1 MiB webhook gets its 413 in 20 of 20 tries from a client that writes the whole body before reading', async () => {
  const r = await receiver();
  const body = Buffer.alloc(1024 * 1024, 0x61);
  const head = `POST ${r.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const results = [];
  for (let i = 0; i < 20; i += 1) results.push(await writeAllThenRead(r.port, head, body));
  const got = results.map((x) => /^HTTP\/1\.1 (\d{3})/.exec(x.text)?.[1] ?? `none (${x.error ?? 'closed'})`);
  expect(got).toEqual(Array(20).fill('413'));
  // Nor did any write fail: a sender that stops at EPIPE never reads the answer at all.
  expect(results.map((x) => x.error)).toEqual(Array(20).fill(null));
  expect(results.every((x) => x.text.includes('Connection: close'))).toBe(true);
});

it('the same for a 12 MiB body, more than the kernel takes in on loopback before the receiver answers', async () => {
  // On this machine's loopback a 1 MiB body fits in the kernel's buffers before the answer comes, so only a
  // bigger one shows the reset that a slower link shows at 1 MiB: without the lingering close every try failed
  // with EPIPE here.
  const r = await receiver();
  const body = Buffer.alloc(12 * 1024 * 1024, 0x61);
  const head = `POST ${r.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  for (let i = 0; i < 5; i += 1) {
    const { text, error } = await writeAllThenRead(r.port, head, body);
    expect(text, String(error)).toMatch(/^HTTP\/1\.1 413 /);
    expect(error).toBeNull();
  }
});

it('the same for a chunked body with no declared size, which is refused while it streams', async () => {
  const r = await receiver();
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  const framed = Buffer.concat(
    [0, 1, 2, 3].flatMap(() => [Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
  );
  const body = Buffer.concat([framed, Buffer.from('0\r\n\r\n')]);
  const head = `POST ${r.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  for (let i = 0; i < 5; i += 1) {
    const { text, error } = await writeAllThenRead(r.port, head, body);
    expect(text, String(error)).toMatch(/^HTTP\/1\.1 413 /);
    expect(error).toBeNull();
  }
});

it('lingers only so far: a body past the bound is cut off, and the answer was sent before it', async () => {
  const r = await receiver();
  const socket = connect(r.port, '127.0.0.1');
  socket.on('error', () => undefined);
  cleanups.push(async () => socket.destroy());
  await once(socket, 'connect');
  const size = LINGER_MAX_BYTES * 4;
  socket.write(`POST ${r.hookPath} HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
  let text = '';
  // Read from the start: this test is about the bound, not about a sender that reads late.
  socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  // Keep writing until the server stops reading: it never takes the whole declared body.
  const block = Buffer.alloc(64 * 1024);
  let sent = 0;
  while (sent < size && socket.writable) {
    sent += block.length;
    if (!socket.write(block)) await Promise.race([once(socket, 'drain').catch(() => undefined), closed]);
  }
  await closed;
  expect(text).toMatch(/^HTTP\/1\.1 413 /);
  expect(sent).toBeLessThan(size);
});
