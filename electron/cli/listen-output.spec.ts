import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { RecordingJob } from '../core/recordings/types.js';
import { systemClock } from '../core/time.js';
import {
  coalescingWriter,
  createListenPrinter,
  OUTPUT_BATCH_MS,
  REPEATS_PER_WINDOW,
  verification,
} from './listen-output.js';

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

  it('says when a webhook is the other form of a recording already received (a twin job: saved once)', () => {
    const human = printer();
    const twin = { ...job('ch-9'), twin: 'k-legacy' } as RecordingJob;
    human.p.received(twin, []);
    expect(human.text()).toContain(
      'received  ch-9 (10 B announced) (also announced in the other webhook form: saved once)',
    );
    const nd = printer(true);
    nd.p.received(twin, []);
    nd.p.received(job('ch-10'), []);
    const [first, second] = nd
      .text()
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(first).toMatchObject({ type: 'received', channelId: 'ch-9', sameRecordingAs: 'k-legacy' });
    expect(second).not.toHaveProperty('sameRecordingAs');
  });

  it('says when a webhook is a new recording under the URL of one already saved (a reused channel ID)', () => {
    const next = { ...job('morning-show'), follows: 'k-day1' } as RecordingJob;
    const human = printer();
    human.p.received(next, []);
    expect(human.text()).toContain(
      'received  morning-show (10 B announced) (a new recording under the URL of one already saved: saved beside it)',
    );
    const nd = printer(true);
    nd.p.received(next, []);
    expect(JSON.parse(nd.text())).toMatchObject({ type: 'received', newRecordingAfter: 'k-day1' });
  });

  it('says a recording saved shorter than announced as such, never verified (human and NDJSON)', () => {
    const short = { ...job('morning-show'), announcedBytes: 3_145_728, checks: ['short'] } as RecordingJob;
    const human = printer();
    human.p.saved({ job: short, path: '/rec/morning-show.mp4', bytes: 1_572_864 });
    expect(human.text()).toContain(
      'saved     morning-show → /rec/morning-show.mp4 (1.6 MB, shorter than announced (3.1 MB announced), not verified)',
    );
    expect(human.text()).not.toMatch(/verified:|repeat-consistent/);
    const nd = printer(true);
    nd.p.saved({ job: short, path: '/rec/morning-show.mp4', bytes: 1_572_864 });
    expect(JSON.parse(nd.text())).toMatchObject({
      type: 'saved',
      checks: ['short'],
      shorterThanAnnounced: true,
      announcedBytes: 3_145_728,
      verification: expect.stringMatching(/^shorter than announced \(3\.1 MB announced\), not verified$/),
    });
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
      else expect(summary).toContain(`rejected  ${5000 - REPEATS_PER_WINDOW} more requests in the last 10 s`);
    }
  });

  it('counts one hidden line in the singular, never "request(s)"', () => {
    const { p, text } = printer(false);
    for (let i = 0; i <= REPEATS_PER_WINDOW; i += 1)
      p.rejected({ status: 404, reason: 'unknown path', remoteAddress: '127.0.0.1' });
    p.close();
    expect(text()).toContain('rejected  1 more request in the last 10 s (not shown)');
    expect(text()).not.toContain('(s)');
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
        expect(lines.some((l) => l.includes(`duplicate ${hidden} more duplicate webhooks in the last 10 s`))).toBe(
          true,
        );
        expect(
          lines.some((l) => l.includes(`failed    ${hidden} more failed attempts to be retried in the last 10 s`)),
        ).toBe(true);
      }
    }
  });

  it('always prints a refused client recording with its channel, even in a flood of other refusals', () => {
    for (const ndjson of [false, true]) {
      const { p, text } = printer(ndjson);
      for (let i = 0; i < 100; i += 1) p.rejected({ status: 404, reason: 'unknown path', remoteAddress: '10.0.0.9' });
      const upload = { channelId: 'take-7', track: 'local' as const, fileName: 'svc.take-7LL.ogg', origin: null };
      p.rejected({ status: 413, reason: 'upload: too large', remoteAddress: '127.0.0.1', upload });
      p.close();
      const lines = text().trimEnd().split('\n');
      if (ndjson) {
        const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        expect(events.filter((e) => e.channelId === 'take-7')).toEqual([
          expect.objectContaining({ type: 'rejected', status: 413, track: 'local', fileName: 'svc.take-7LL.ogg' }),
        ]);
        expect(events.find((e) => e.type === 'rejected-summary')).toMatchObject({ count: 100 - REPEATS_PER_WINDOW });
      } else {
        expect(lines.filter((l) => l.includes('channel take-7 (local stream): upload: too large'))).toHaveLength(1);
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

describe('listen printer (tunnel uploads and missing recordings)', () => {
  const blocked = {
    provider: 'localtunnel',
    state: 'reachable',
    publicUrl: 'https://x.loca.lt/hooks/t',
    localUrl: 'http://127.0.0.1:1/hooks/t',
    uploadUrl: 'https://x.loca.lt/uploads/t',
    lastCheckedAt: '2026-01-01T00:00:00.000Z',
    message: null,
    registered: false,
    uploads: 'blocked',
    uploadsMessage: 'Browsers get a reminder page instead of Tally.',
  } as const;

  it('carries the upload path status and its reason in the tunnel line', () => {
    const nd = printer(true);
    nd.p.tunnel({ ...blocked });
    nd.p.tunnel({ ...blocked, uploads: 'ok', uploadsMessage: null });
    expect(
      nd
        .text()
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    ).toEqual([
      expect.objectContaining({
        type: 'tunnel',
        state: 'reachable',
        uploads: 'blocked',
        uploadsMessage: blocked.uploadsMessage,
      }),
      expect.objectContaining({ type: 'tunnel', uploads: 'ok', uploadsMessage: null }),
    ]);
    const human = printer();
    human.p.tunnel({ ...blocked });
    expect(human.text()).toContain(`uploads   blocked: ${blocked.uploadsMessage}`);
  });

  it('prints a recording expected but not received as one recording-missing line', () => {
    const missing = { channelId: 'lost-1', closedAt: '2026-01-01T00:00:00.000Z', waitedMs: 600_000 };
    const nd = printer(true);
    nd.p.recordingMissing(missing);
    expect(JSON.parse(nd.text())).toEqual({
      type: 'recording-missing',
      channelId: 'lost-1',
      closedAt: missing.closedAt,
      waitedSeconds: 600,
    });
    const human = printer();
    human.p.recordingMissing(missing);
    expect(human.text()).toMatch(/missing {3}lost-1: recording expected but not received 10 min after/);
  });
});

describe('coalescingWriter', () => {
  it("gathers one turn's lines into one write, in order, and flushes what is left on demand", async () => {
    const writes: string[] = [];
    const writer = coalescingWriter({ write: (text: string) => writes.push(text) });
    for (let i = 0; i < 1000; i += 1) writer.write(`line ${i}\n`);
    expect(writes).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    expect(writes[0]?.split('\n')).toHaveLength(1001);
    expect(writes[0]?.startsWith('line 0\nline 1\n')).toBe(true);
    writer.write('last\n');
    writer.flush();
    expect(writes).toEqual([expect.any(String), 'last\n']);
  });

  it('writes a burst in one write per batch window, and a line after a quiet spell at the end of its turn', async () => {
    const writes: { text: string; at: number }[] = [];
    let wrote: () => void = () => undefined;
    // A window far longer than five turns take, so the test says the same on a loaded machine.
    const windowMs = 10 * OUTPUT_BATCH_MS;
    // Each write is timed by the writer's own clock, as the writer last read it (just before it wrote).
    let read = 0;
    const clock = { now: () => (read = systemClock.now()) };
    const writer = coalescingWriter(
      {
        write: (text: string) => {
          writes.push({ text, at: read });
          wrote();
        },
      },
      windowMs,
      clock,
    );
    const nextWrite = () => new Promise<void>((resolve) => (wrote = resolve));
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    writer.write('first\n');
    await turn();
    expect(writes.map((w) => w.text)).toEqual(['first\n']);
    // The burst goes on over many turns: nothing is written until the window since the first write is over.
    const second = nextWrite();
    for (let i = 0; i < 5; i += 1) {
      writer.write(`burst ${i}\n`);
      await turn();
    }
    await second;
    expect(writes).toHaveLength(2);
    expect(writes[1]?.text).toBe('burst 0\nburst 1\nburst 2\nburst 3\nburst 4\n');
    expect((writes[1]?.at ?? 0) - (writes[0]?.at ?? 0)).toBeGreaterThanOrEqual(windowMs);
  });

  it('keeps the window on its own clock when the timer fires early by that clock', async () => {
    // A timer counts whole milliseconds of the event loop's time, so it can fire before the window is over on the
    // writer's clock. Here the writer's clock runs at half speed: every timer fires early by it.
    const start = systemClock.now();
    const clock = { now: () => (systemClock.now() - start) / 2 };
    const writes: { text: string; at: number }[] = [];
    let wrote: () => void = () => undefined;
    const windowMs = 2 * OUTPUT_BATCH_MS;
    const writer = coalescingWriter(
      {
        write: (text: string) => {
          writes.push({ text, at: clock.now() });
          wrote();
        },
      },
      windowMs,
      clock,
    );
    writer.write('first\n');
    writer.flush();
    const second = new Promise<void>((resolve) => (wrote = resolve));
    writer.write('second\n');
    await second;
    expect(writes.map((w) => w.text)).toEqual(['first\n', 'second\n']);
    expect((writes[1]?.at ?? 0) - (writes[0]?.at ?? 0)).toBeGreaterThanOrEqual(windowMs);
  });
});

describe('what a saved line says was checked (issue 20)', () => {
  it('calls a recording verified only with a checksum or two identical downloads', () => {
    expect(verification(['size', 'md5'])).toBe('verified: size and MD5');
    expect(verification(['md5'])).toBe('verified: MD5');
    expect(verification(['size', 'repeat'])).toBe('size + repeat-consistent (the ETag is not an MD5)');
    expect(verification(['size'])).toBe('size only (no checksum from the server)');
    expect(verification([])).toBe('not verified (nothing to check it against)');
  });
});

describe('listen printer (NDJSON health)', () => {
  it('names the recordings that need attention in the health line, as tally status --json does', () => {
    const { p, text } = printer(true);
    const problem = {
      channelId: 'night-owl',
      key: 'abc',
      state: 'pending',
      reason: 'The download server answered 503.',
      nextAttemptAt: '2026-05-14T09:41:33.000Z',
    };
    const view = {
      state: 'warning',
      summary: '1 download is failing',
      summaryNotes: [],
      components: [],
      receiver: { host: '127.0.0.1', port: 8787, configuredPort: 8787, portFollows: false },
      problems: 3,
      problemRecordings: [problem],
      moreProblems: 2,
      checkedAt: '2026-05-14T09:41:03.000Z',
    } as const;
    p.health(view as never, null);
    const line = JSON.parse(text().trim().split('\n')[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ type: 'health', problems: 3, problemRecordings: [problem], moreProblems: 2 });
  });
});

describe('listen printer (a sandbox run)', () => {
  it('never promises that a sandbox run resumes its unfinished downloads', () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const p = createListenPrinter({ out, ndjson: false, tty: false, folder: '/rec', sandbox: true });
    p.ready({ localUrl: 'http://127.0.0.1:1/hooks/x', publicUrl: null, uploadOrigins: [], localOnly: true } as never);
    p.stopping();
    p.close();
    expect(text).not.toMatch(/resume on the next start/);
    expect(text).toContain('each sandbox run starts afresh, so its unfinished downloads are not resumed');
    expect(text).toContain('its unfinished downloads end with it');
  });
});
