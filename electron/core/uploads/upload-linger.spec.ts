/**
 * A 413 that arrives on the upload route too (issue 32, finding 5): a body far past the upload limit, too big
 * to be drained before the answer, is answered at once and its rest read and dropped (bounded) before the
 * connection closes, so a sender that writes its whole body before reading gets the status, not a reset.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';
import { mountUploads } from './upload-route.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('a 20 MiB upload over a 1 MiB limit gets its 413 from a client that writes the whole body before reading', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tally-upload-linger-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const receiver = new WebhookReceiver({
    inbox: { add: () => Promise.reject(new Error('no webhooks in this test')) },
    tokens: await TokenStore.open(join(dir, 'state')),
    policy: new DownloadOriginPolicy(['https://s3.amazonaws.com']),
  });
  await mountUploads(receiver, { folder: join(dir, 'recordings'), allowedOrigins: () => [], maxBytes: 1024 * 1024 });
  await receiver.start();
  cleanups.push(() => receiver.stop(1_000));
  const body = Buffer.alloc(20 * 1024 * 1024, 0x4f);
  for (let i = 0; i < 3; i += 1) {
    const socket = connect(receiver.port, '127.0.0.1');
    // Paused before it connects: nothing is read from the kernel until the whole body is written.
    socket.pause();
    let error: string | null = null;
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await once(socket, 'connect');
    await new Promise<void>((resolve) => {
      socket.write(
        `POST ${receiver.routePath('uploads')} HTTP/1.1\r\nHost: x\r\nContent-Type: audio/ogg\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body, () => resolve());
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.resume();
    await closed;
    expect(Buffer.concat(chunks).toString('latin1'), String(error)).toMatch(
      /^HTTP\/1\.1 413 [^]*The recording is larger than the 1\.0 MiB upload limit/,
    );
    expect(error).toBeNull();
  }
});
