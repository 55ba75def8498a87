import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RecordingJob } from '../core/recordings/types.js';
import { createListenPrinter, REPEATS_PER_WINDOW } from './listen-output.js';

/** A webhook's channel ID that tries to forge a "saved" line and recolour the terminal. */
const HOSTILE = 'evil\r\n12:00:00 saved     bank-keynote → /home/me/Recordings/bank.mp4\x1b[31m\x1b]0;owned\x07\u202e';

function printer(ndjson = false) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const p = createListenPrinter({ out, ndjson, tty: false, folder: '/rec' });
  return { p, text: () => text };
}

const job = (channelId: string) =>
  ({
    channelId,
    key: `k-${channelId.length}`,
    url: 'https://s3.amazonaws.com/b/x.mp4',
    announcedBytes: 10,
  }) as unknown as RecordingJob;

describe('listen printer (human output)', () => {
  it('prints hostile channel IDs and messages on one line each, with no control or bidi characters', () => {
    const { p, text } = printer();
    p.received(job(HOSTILE), []);
    p.failed({
      job: job(HOSTILE),
      error: new Error(`HTTP 404 for ${HOSTILE}`),
      willRetry: false,
      nextAttemptAt: null,
    } as never);
    p.expired({ job: job(HOSTILE), reason: HOSTILE } as never);
    const lines = text().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    // eslint-disable-next-line no-control-regex
    expect(text().replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(lines[0]).toContain('received  evil��12:00:00 saved');
  });

  it('leaves NDJSON to JSON escaping, which already keeps each event on one line', () => {
    const { p, text } = printer(true);
    p.received(job(HOSTILE), []);
    const lines = text().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ type: 'received', channelId: HOSTILE });
  });

  it('prints a flood of refusals as a few lines and one count, human and NDJSON alike', () => {
    for (const ndjson of [false, true]) {
      const { p, text } = printer(ndjson);
      for (let i = 0; i < 5000; i += 1) p.rejected({ status: 404, reason: 'unknown path', remoteAddress: '127.0.0.1' });
      p.close();
      const lines = text().trimEnd().split('\n');
      expect(lines.length).toBeLessThanOrEqual(REPEATS_PER_WINDOW + 2);
      const summary = lines.at(-2) ?? '';
      if (ndjson)
        expect(JSON.parse(summary)).toMatchObject({ type: 'rejected-summary', count: 5000 - REPEATS_PER_WINDOW });
      else expect(summary).toContain(`rejected  ${5000 - REPEATS_PER_WINDOW} more request(s) in the last 10 s`);
    }
  });

  it('limits repeated duplicates and retried failures the same way, and never hides a final failure', () => {
    for (const ndjson of [false, true]) {
      const { p, text } = printer(ndjson);
      const retrying = { error: new Error('HTTP 503'), willRetry: true, nextAttemptAt: Date.now() + 1_000 };
      for (let i = 0; i < 500; i += 1) {
        p.duplicate(job(`dup-${i}`));
        p.failed({ job: job(`retry-${i}`), ...retrying } as never);
      }
      p.failed({ job: job('final'), error: new Error('HTTP 404'), willRetry: false, nextAttemptAt: null } as never);
      p.close();
      const lines = text().trimEnd().split('\n');
      // 20 of each, the final failure, two summaries and "stopped".
      expect(lines).toHaveLength(2 * REPEATS_PER_WINDOW + 4);
      const hidden = 500 - REPEATS_PER_WINDOW;
      if (ndjson) {
        const events = lines.map((l) => JSON.parse(l) as { type: string; count?: number; willRetry?: boolean });
        expect(events.filter((e) => e.type === 'duplicate')).toHaveLength(REPEATS_PER_WINDOW);
        expect(events.filter((e) => e.type === 'failed' && e.willRetry === false)).toHaveLength(1);
        expect(events.filter((e) => e.type.endsWith('-summary'))).toEqual([
          { type: 'duplicate-summary', count: hidden, windowSeconds: 10 },
          { type: 'failed-summary', count: hidden, windowSeconds: 10 },
        ]);
      } else {
        expect(lines.filter((l) => / duplicate dup-/.test(l))).toHaveLength(REPEATS_PER_WINDOW);
        expect(lines.some((l) => l.includes('failed    final: HTTP 404 (not retried)'))).toBe(true);
        expect(lines.some((l) => l.includes(`duplicate ${hidden} more duplicate webhook(s) in the last 10 s`))).toBe(
          true,
        );
        expect(
          lines.some((l) => l.includes(`failed    ${hidden} more failed attempt(s) to be retried in the last 10 s`)),
        ).toBe(true);
      }
    }
  });

  it('gives no tunnel advice when the sender is the built-in sandbox on this machine', () => {
    for (const localOnly of [false, true]) {
      const { p, text } = printer();
      p.ready({ localUrl: 'http://127.0.0.1:1/hooks/t', publicUrl: null, uploadOrigins: [], note: null, localOnly });
      expect(text().includes('No public URL'), String(localOnly)).toBe(!localOnly);
    }
  });
});
