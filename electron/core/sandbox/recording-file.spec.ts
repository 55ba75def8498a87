import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIP, RecordingFile, freeBoxHeader, recordingSizeFor } from './recording-file.js';
import { walkBoxes } from '../../../tests/support/sandbox/http-helpers.js';

function readAll(file: RecordingFile): Buffer {
  const out = Buffer.alloc(file.size);
  file.read(0, out);
  return out;
}

function hasFfprobe(): boolean {
  try {
    execFileSync('ffprobe', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('recording file', () => {
  it('starts with the ftyp box of a real clip and its top-level boxes add up to the exact size', () => {
    const file = new RecordingFile(300_000, 7);
    const bytes = readAll(file);
    expect(bytes.toString('latin1', 4, 8)).toBe('ftyp');
    const boxes = walkBoxes(bytes);
    expect(boxes.map((b) => b.type)).toEqual(['ftyp', 'moov', 'free', 'mdat', 'free']);
    expect(boxes.at(-1)).toEqual({ type: 'free', offset: CLIP.length, size: 300_000 - CLIP.length });
  });

  it('never goes below the clip and always leaves room for a box header', () => {
    expect(recordingSizeFor(0)).toBe(CLIP.length);
    expect(recordingSizeFor(CLIP.length)).toBe(CLIP.length);
    expect(recordingSizeFor(CLIP.length + 3)).toBe(CLIP.length + 8);
    expect(recordingSizeFor(CLIP.length + 8)).toBe(CLIP.length + 8);
    expect(() => recordingSizeFor(-1)).toThrow(RangeError);
    expect(() => recordingSizeFor(1.5)).toThrow(RangeError);
    expect(walkBoxes(readAll(new RecordingFile(CLIP.length + 8, 1))).at(-1)).toMatchObject({ type: 'free', size: 8 });
    expect(walkBoxes(readAll(new RecordingFile(10, 1))).map((b) => b.type)).toEqual(['ftyp', 'moov', 'free', 'mdat']);
  });

  it('switches the padding box to a 64-bit largesize above 4 GiB - 1', () => {
    expect(freeBoxHeader(0xffffffff).length).toBe(8);
    const large = freeBoxHeader(0x100000000);
    expect(large.readUInt32BE(0)).toBe(1);
    expect(large.toString('latin1', 4, 8)).toBe('free');
    expect(large.readBigUInt64BE(8)).toBe(0x100000000n);

    const size = 5 * 1024 ** 3;
    const file = new RecordingFile(size, 3);
    const head = Buffer.alloc(CLIP.length + 16);
    file.read(0, head);
    expect(walkBoxes(head, size).at(-1)).toEqual({ type: 'free', offset: CLIP.length, size: size - CLIP.length });
    // The very last bytes are still generated on demand.
    const tail = Buffer.alloc(100);
    expect(file.read(size - 50, tail)).toBe(50);
  });

  it('generates position-dependent bytes: any window equals the same slice of a full read', () => {
    const file = new RecordingFile(1_000_003, 11);
    const all = readAll(file);
    for (const [offset, length] of [
      [0, 10],
      [CLIP.length - 3, 40],
      [CLIP.length + 5, 3],
      [123_457, 70_001],
      [999_990, 13],
    ] as const) {
      const window = Buffer.alloc(length);
      const n = file.read(offset, window);
      expect(n).toBe(Math.min(length, file.size - offset));
      expect(window.subarray(0, n).equals(all.subarray(offset, offset + n))).toBe(true);
    }
    // Shifting by a whole word changes the bytes: an offset bug cannot go unnoticed.
    const fillerAt = CLIP.length + 64;
    expect(all.subarray(fillerAt, fillerAt + 64).equals(all.subarray(fillerAt + 8, fillerAt + 72))).toBe(false);
  });

  it('differs between recordings of one size and hashes like its bytes', async () => {
    const a = new RecordingFile(200_000, 1);
    const b = new RecordingFile(200_000, 2);
    const bytesA = readAll(a);
    expect(bytesA.equals(readAll(b))).toBe(false);
    expect(await a.digest('md5')).toBe(createHash('md5').update(bytesA).digest('hex'));
    expect(await a.digest('sha256')).toBe(createHash('sha256').update(bytesA).digest('hex'));
    const streamed: Buffer[] = [];
    for await (const chunk of a.createReadStream(10, 150_000)) streamed.push(chunk as Buffer);
    expect(Buffer.concat(streamed).equals(bytesA.subarray(10, 150_001))).toBe(true);
  });

  it('generates padding fast with a reusable buffer', () => {
    const file = new RecordingFile(256 * 1024 * 1024, 5);
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    const started = performance.now();
    for (let at = 0; at < file.size;) at += file.read(at, buffer);
    // 256 MiB well under 2 s even on a busy CI core (it runs at several GB/s on a desktop).
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it.skipIf(!hasFfprobe())('is a playable mp4 by ffprobe, padding included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-sandbox-'));
    try {
      const path = join(dir, 'r.mp4');
      await writeFile(path, readAll(new RecordingFile(2_000_000, 9)));
      const out = execFileSync('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name',
        '-of',
        'csv=p=0',
        path,
      ]);
      expect(out.toString().trim().split('\n').sort()).toEqual(['aac', 'h264']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
