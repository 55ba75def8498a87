import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { DownloadOriginPolicy } from '../net/url-policy.js';
import { mountUploads, type UploadedEvent } from '../uploads/upload-route.js';
import { WebhookReceiver } from '../webhook/receiver.js';
import { TokenStore } from '../webhook/token.js';
import { startSandbox } from './index.js';
import {
  MIN_CLIENT_RECORDING_BYTES,
  WEBM_GENERATOR_SOURCE,
  attachDemoWebClient,
  generateWebm,
  sdkFileName,
  type ClientUploadResult,
} from './web-client.js';

const cleanups: (() => Promise<unknown>)[] = [];

interface Probe {
  streams: { codec_type: string; sample_rate: string; channels: number; nb_read_frames?: string }[];
  format: { duration: string };
}

/** ffprobe (from ffmpeg, which .ci/run installs) decoding every frame of the file. */
function ffprobe(path: string): Promise<Probe> {
  const args = ['-v', 'error', '-count_frames', '-show_streams', '-show_format', '-of', 'json', path];
  return new Promise((resolve, reject) => {
    execFile('ffprobe', args, (error, stdout, stderr) => {
      if (error || stderr.trim()) reject(new Error(`ffprobe: ${stderr || String(error)}`));
      else resolve(JSON.parse(stdout) as Probe);
    });
  });
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Reads one EBML element header at `at`: ID bytes, data size (null = unknown) and where the data starts. */
function element(buf: Buffer, at: number): { id: number; size: number | null; data: number } {
  const idLength = Math.clz32(buf[at] as number) - 23;
  let id = 0;
  for (let i = 0; i < idLength; i += 1) id = id * 256 + (buf[at + i] as number);
  const first = buf[at + idLength] as number;
  const sizeLength = Math.clz32(first) - 23;
  let size = first & (0xff >> sizeLength);
  let allOnes = size === 0xff >> sizeLength;
  for (let i = 1; i < sizeLength; i += 1) {
    const byte = buf[at + idLength + i] as number;
    size = size * 256 + byte;
    allOnes &&= byte === 0xff;
  }
  return { id, size: allOnes ? null : size, data: at + idLength + sizeLength };
}

describe('generateWebm', () => {
  it('is a well-formed WebM file of exactly the asked size: header, Segment, Info, Tracks, Clusters, Void', () => {
    const file = generateWebm(10_000, 7);
    expect(file.length).toBe(10_000);
    const ebml = element(file, 0);
    expect(ebml.id).toBe(0x1a45dfa3);
    expect(file.subarray(ebml.data, ebml.data + (ebml.size ?? 0)).includes(Buffer.from('webm'))).toBe(true);
    const segment = element(file, ebml.data + (ebml.size ?? 0));
    expect(segment).toMatchObject({ id: 0x18538067, size: null });
    const ids: number[] = [];
    let at = segment.data;
    while (at < file.length) {
      const child = element(file, at);
      ids.push(child.id);
      at = child.data + (child.size ?? 0);
    }
    expect(at).toBe(file.length);
    expect(ids).toEqual([0x1549a966, 0x1654ae6b, 0x1f43b675, 0xec]);
  });

  it('is real audio that ffprobe decodes: one PCM track, as long as its bytes say, for every size', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tally-webm-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    for (const [size, seconds] of [
      [256 * 1024, 8.1],
      [MIN_CLIENT_RECORDING_BYTES + 40, 0],
      [1_200_000, 37.4],
    ] as const) {
      const path = join(dir, `${size}.webm`);
      await writeFile(path, generateWebm(size, 3));
      const probe = await ffprobe(path);
      expect(probe.streams).toMatchObject([{ codec_type: 'audio', sample_rate: '16000', channels: 1 }]);
      if (seconds > 0) {
        // Every packet decodes (ffprobe counts frames by decoding them) and the duration is what the bytes hold.
        expect(Number(probe.streams[0]?.nb_read_frames)).toBeGreaterThan(0);
        expect(Number(probe.format.duration)).toBeCloseTo(seconds, 0);
      }
    }
  });

  it('gives the same bytes for the same seed, other bytes for another, and never less than the header', () => {
    expect(generateWebm(5000, 1).equals(generateWebm(5000, 1))).toBe(true);
    expect(generateWebm(5000, 1).equals(generateWebm(5000, 2))).toBe(false);
    expect(generateWebm(3, 1).length).toBe(MIN_CLIENT_RECORDING_BYTES);
  });

  it('matches the browser copy of the generator byte for byte', () => {
    const generate = runInNewContext(`${WEBM_GENERATOR_SOURCE}; tallyGenerateWebm`, { Uint8Array, Math }) as (
      size: number,
      seed: number,
    ) => Uint8Array;
    for (const [size, seed] of [
      [70_000, 42],
      [MIN_CLIENT_RECORDING_BYTES, 0],
      [1 << 20, 4_294_967_295],
    ] as const) {
      expect(Buffer.from(generate(size, seed)).equals(generateWebm(size, seed))).toBe(true);
    }
  });

  it('names files like the SDK', () => {
    expect(sdkFileName('svc', '1581324488053_Dc5aQ', 'LL')).toBe('svc.1581324488053_Dc5aQLL.ogg');
    expect(sdkFileName('svc', 'ch-1', 'RR')).toBe('svc.ch-1RR.ogg');
  });
});

describe('the sandbox web client', () => {
  async function setup(): Promise<{
    sandbox: Awaited<ReturnType<typeof startSandbox>>;
    recordUrl: string;
    clientDir: string;
    uploaded: UploadedEvent[];
  }> {
    const dir = await mkdtemp(join(tmpdir(), 'tally-web-client-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const sandbox = await startSandbox();
    cleanups.push(() => sandbox.close());
    const receiver = new WebhookReceiver({
      inbox: { add: () => Promise.reject(new Error('unused')) },
      policy: new DownloadOriginPolicy([sandbox.downloadOrigin]),
      tokens: await TokenStore.open(dir),
    });
    const route = await mountUploads(receiver, { folder: dir, allowedOrigins: () => [sandbox.apiUrl] });
    const uploaded: UploadedEvent[] = [];
    route.on('uploaded', (e) => uploaded.push(e));
    await receiver.start();
    cleanups.push(() => receiver.stop(1000));
    return {
      sandbox,
      recordUrl: `${receiver.origin}${receiver.routePath('uploads')}`,
      clientDir: join(dir, 'client'),
      uploaded,
    };
  }

  it('control.uploadClientRecording posts like the SDK and the receiver saves the same bytes', async () => {
    const { sandbox, recordUrl, clientDir, uploaded } = await setup();
    const result = await sandbox.control.uploadClientRecording(recordUrl, { bytes: 100_000, seed: 9 });
    expect(result).toMatchObject({ status: 201, ok: true, bytes: 100_000 });
    expect(result.fileName).toMatch(/^sandbox-service\.\d+_[A-Za-z0-9_-]{5}LL\.ogg$/);
    expect(result.sha256).toBe(createHash('sha256').update(generateWebm(100_000, 9)).digest('hex'));
    const files = await readdir(clientDir);
    // The SDK calls it .ogg, but the body is audio/webm: the type wins.
    expect(files).toEqual([result.fileName.replace(/\.ogg$/, '.webm')]);
    const saved = await readFile(join(clientDir, files[0] as string));
    expect(createHash('sha256').update(saved).digest('hex')).toBe(result.sha256);
    expect(uploaded[0]).toMatchObject({ contentType: 'audio/webm', origin: null });
  });

  it('sends as a page origin when asked, and reports a refusal instead of throwing', async () => {
    const { sandbox, recordUrl } = await setup();
    const allowed = await sandbox.control.uploadClientRecording(recordUrl, {
      origin: sandbox.apiUrl,
      mime: 'audio/ogg',
    });
    expect(allowed.status).toBe(201);
    const refused = await sandbox.control.uploadClientRecording(recordUrl, { origin: 'https://elsewhere.example' });
    expect(refused).toMatchObject({ status: 403, ok: false });
  });

  it('does the same through the control API, and serves the page with a strict CSP', async () => {
    const { sandbox, recordUrl, clientDir } = await setup();
    const answer = await fetch(`${sandbox.apiUrl}/_sandbox/web-client/upload`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ recordUrl, bytes: 2048 }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ status: 201, bytes: 2048 });
    expect(await readdir(clientDir)).toHaveLength(1);

    const bad = await fetch(`${sandbox.apiUrl}/_sandbox/web-client/upload`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ recordUrl: 'file:///etc/passwd' }),
    });
    expect(bad.status).toBe(400);

    const page = await fetch(sandbox.webClientUrl(recordUrl));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(csp).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain('X-FILENAME');
    // The prefilled URL is escaped into the attribute.
    expect(html).toContain(`value="${recordUrl}"`);
    expect((await fetch(sandbox.webClientUrl('"><script>alert(1)</script>'))).ok).toBe(true);
    expect(await (await fetch(sandbox.webClientUrl('"><b>x</b>'))).text()).not.toContain('"><b>x</b>');
  });

  it('in the demo, sends the SDK pair (LL and RR) whenever a recorded broadcast ends, until detached', async () => {
    const { sandbox, recordUrl, clientDir } = await setup();
    const listeners = sandbox.control.events.listenerCount('broadcast:end');
    let url: string | null = recordUrl;
    const results: Array<[ClientUploadResult | Error, string]> = [];
    let notify: () => void = () => undefined;
    const detach = attachDemoWebClient(sandbox, () => url, {
      bytes: 4096,
      onResult: (result, id) => {
        results.push([result, id]);
        if (results.length === 2) notify();
      },
    });
    const first = new Promise<void>((resolve) => (notify = resolve));
    // A broadcast nobody records has no client recordings either: each pair sits under its broadcast.
    sandbox.control.startBroadcast({ id: 'demo-quiet', record: false });
    await sandbox.control.endBroadcast('demo-quiet');
    sandbox.control.startBroadcast({ id: 'demo-1', record: true, recordingBytes: 50_000 });
    await sandbox.control.endBroadcast('demo-1');
    await first;
    expect(results).toHaveLength(2);
    expect(results.map((r) => r[1])).toEqual(['demo-1', 'demo-1']);
    expect(results.map((r) => (r[0] as ClientUploadResult).fileName).sort()).toEqual([
      'sandbox-service.demo-1LL.ogg',
      'sandbox-service.demo-1RR.ogg',
    ]);
    expect(results[0]?.[0]).toMatchObject({ status: 201, bytes: 4096 });
    expect((await readdir(clientDir)).sort()).toEqual([
      'sandbox-service.demo-1LL.webm',
      'sandbox-service.demo-1RR.webm',
    ]);

    // Uploads off: nothing is sent. Detached: nothing either.
    url = null;
    sandbox.control.startBroadcast({ id: 'demo-2', record: false });
    await sandbox.control.endBroadcast('demo-2');
    detach();
    url = recordUrl;
    sandbox.control.startBroadcast({ id: 'demo-3', record: true, recordingBytes: 50_000 });
    await sandbox.control.endBroadcast('demo-3');
    expect(results).toHaveLength(2);
    expect(sandbox.control.events.listenerCount('broadcast:end')).toBe(listeners);
  });
});
