import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UPLOAD_LOG_FILE, UploadLog, newUploadId, type UploadRecord } from './upload-log.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-upload-log-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function record(fileName: string): UploadRecord {
  return {
    id: newUploadId(),
    path: join('/recordings/client', fileName),
    fileName,
    bytes: 42,
    contentType: 'audio/webm',
    sha256: 'ab'.repeat(32),
    origin: 'https://app.example',
    receivedAt: new Date(0).toISOString(),
  };
}

describe('UploadLog', () => {
  it('lists appended records after a reopen, in order', async () => {
    const log = await UploadLog.open(dir);
    const a = record('a.webm');
    const b = record('b.ogg');
    await Promise.all([log.append(a), log.append(b)]);
    expect(log.list()).toEqual([a, b]);
    await log.close();
    const again = await UploadLog.open(dir);
    expect(again.list()).toEqual([a, b]);
    expect(again.get(b.id)).toEqual(b);
    expect(again.replay).toEqual({ records: 2, skippedLines: 0, truncatedBytes: 0 });
    await again.close();
  });

  it('keeps refused uploads apart from saved ones, across a reopen', async () => {
    const log = await UploadLog.open(dir);
    const a = record('a.webm');
    const refused = {
      id: newUploadId(),
      status: 413,
      reason: 'too large',
      fileName: 'svc.ch-1LL.ogg',
      channelId: 'ch-1',
      track: 'local' as const,
      origin: null,
      at: new Date(0).toISOString(),
    };
    await log.append(a);
    await log.appendRefused(refused);
    expect(log.list()).toEqual([a]);
    expect(log.listRefused()).toEqual([refused]);
    await log.close();
    const again = await UploadLog.open(dir);
    expect(again.list()).toEqual([a]);
    expect(again.listRefused()).toEqual([refused]);
    expect(again.getRefused(refused.id)).toEqual(refused);
    expect(again.replay.skippedLines).toBe(0);
    await again.close();
  });

  it('cuts off a torn last line, keeps a whole one missing its newline, and skips damaged lines', async () => {
    const a = record('a.webm');
    const b = record('b.webm');
    const file = join(dir, UPLOAD_LOG_FILE);
    await writeFile(file, `${JSON.stringify({ v: 1, upload: a })}\nnot json\n{"v":1,"upload":{"id":"x"}}\n{"v":1,"upl`);
    const log = await UploadLog.open(dir);
    expect(log.list()).toEqual([a]);
    expect(log.replay).toEqual({ records: 1, skippedLines: 2, truncatedBytes: 11 });
    await log.append(b);
    await log.close();
    // The torn bytes are gone, so the next line was not glued onto them.
    expect((await readFile(file, 'utf8')).endsWith(`${JSON.stringify({ v: 1, upload: b })}\n`)).toBe(true);

    await appendFile(file, JSON.stringify({ v: 1, upload: record('c.webm') }));
    const reopened = await UploadLog.open(dir);
    expect(reopened.list().map((r) => r.fileName)).toEqual(['a.webm', 'b.webm', 'c.webm']);
    await reopened.append(record('d.webm'));
    await reopened.close();
    const last = await UploadLog.open(dir);
    expect(last.list().map((r) => r.fileName)).toEqual(['a.webm', 'b.webm', 'c.webm', 'd.webm']);
    await last.close();
  });

  it('refuses appends after close', async () => {
    const log = await UploadLog.open(dir);
    await log.close();
    await expect(log.append(record('a.webm'))).rejects.toThrow(/closed/);
  });
});
