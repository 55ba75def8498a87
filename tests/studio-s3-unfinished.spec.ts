/**
 * The S3 store aborts its own unfinished multipart uploads (issue 31): the RADOS Gateway killed with -9 in the
 * middle of a recording's upload leaves the upload's parts in the bucket (billed, invisible); the put tried again
 * aborts them before it starts over, and the start-up sweep aborts those of recordings this receiver puts while
 * it leaves another receiver's alone. A real gateway (scripts/s3-test-server.sh) behind a real TCP proxy that says
 * when the second part starts going up.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListMultipartUploadsCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3TeamStore } from '../electron/core/studio/s3-store.js';
import { S3_ACCESS_KEY, S3_SECRET_KEY, s3ServerAvailable, startS3Server, type S3Server } from './support/s3-server.js';
import { startTcpHoldProxy, type TcpHoldProxy } from './support/tcp-hold-proxy.js';

const available = s3ServerAvailable();
if (!available && process.env.CI) throw new Error('studio-s3-unfinished.spec: CI needs radosgw (see .ci/run).');

const BUCKET = 'tally-unfinished';
const MiB = 1024 * 1024;
const credentials = { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY };

describe.skipIf(!available)('unfinished multipart uploads after a gateway crash (RADOS Gateway, kill -9)', () => {
  let s3: S3Server;
  let proxy: TcpHoldProxy;
  let root: string;
  let direct: S3Client;
  let file: string;

  beforeAll(async () => {
    s3 = await startS3Server([BUCKET]);
    proxy = await startTcpHoldProxy(Number(new URL(s3.endpoint).port));
    direct = new S3Client({ endpoint: s3.endpoint, forcePathStyle: true, region: 'us-east-1', credentials });
    root = await mkdtemp(join(tmpdir(), 'tally-s3-unfinished-'));
    // Three parts of 16 MiB: the gateway dies while the second goes up.
    file = join(root, 'recording.mp4');
    await writeFile(file, Buffer.alloc(40 * MiB, 7));
  }, 180_000);

  afterAll(async () => {
    direct?.destroy();
    await proxy?.close();
    await s3?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const unfinished = async (prefix: string) =>
    ((await direct.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: prefix }))).Uploads ?? []).map(
      (u) => u.Key,
    );

  const storeVia = (endpoint: string, prefix: string) =>
    new S3TeamStore({ bucket: BUCKET, prefix, endpoint, region: 'us-east-1', credentials });

  /** Starts a put through the proxy and kills the gateway once the second part is on its way; the put fails. */
  async function crashMidUpload(prefix: string, identity: string): Promise<void> {
    const store = storeVia(`http://127.0.0.1:${proxy.port}`, prefix);
    const secondPart = proxy.loseAnswersAfter(/partNumber=2/);
    const put = store.put({ identity, path: file, bytes: 40 * MiB, fresh: true });
    const failed = put.then(
      () => false,
      () => true,
    );
    await secondPart;
    await s3.killGateway();
    expect(await failed).toBe(true);
    await s3.startGateway();
  }

  it('a put tried again aborts what the crashed attempt left, and ends with 0 unfinished uploads', async () => {
    await crashMidUpload('retry', 'rec-1');
    // The crash really left one behind (the SDK's own abort could not reach a dead gateway).
    expect(await unfinished('retry/')).toEqual(['retry/rec-1']);

    const again = await storeVia(s3.endpoint, 'retry').put({ identity: 'rec-1', path: file, bytes: 40 * MiB });
    expect(again.bytes).toBe(40 * MiB);
    expect(await unfinished('retry/')).toEqual([]);
    const head = await direct.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'retry/rec-1' }));
    expect(head.ContentLength).toBe(40 * MiB);
  }, 120_000);

  it("the start-up sweep aborts this receiver's leftovers and leaves another receiver's upload alone", async () => {
    await crashMidUpload('sweep', 'mine');
    await crashMidUpload('sweep', 'theirs');
    expect((await unfinished('sweep/')).sort()).toEqual(['sweep/mine', 'sweep/theirs']);

    const aborted = await storeVia(s3.endpoint, 'sweep').abortUnfinished((identity) => identity !== 'theirs');
    expect(aborted).toBe(1);
    expect(await unfinished('sweep/')).toEqual(['sweep/theirs']);
  }, 180_000);
});
