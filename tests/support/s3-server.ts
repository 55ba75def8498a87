/**
 * A real S3 server for tests: Ceph's RADOS Gateway started by scripts/s3-test-server.sh on free loopback ports
 * (about 10-15 s), with one bucket made through the S3 API itself. `available()` says whether the Debian
 * packages are installed (.ci/run installs them; a spec skips with that reason where they are not).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdir, readFile, rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ROOT } from './built-cli.js';
import { freePorts } from './nats-server.js';

export const S3_ACCESS_KEY = 'TALLYTEST';
export const S3_SECRET_KEY = 'TALLYTESTSECRET';

export interface S3Server {
  endpoint: string;
  close(): Promise<void>;
  /** kill -9 of the RADOS Gateway alone (the cluster behind it keeps what it stored). */
  killGateway(): Promise<void>;
  /** Starts the gateway again on the same port; resolves once it answers. */
  startGateway(): Promise<void>;
}

export function s3ServerAvailable(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v radosgw && command -v ceph-mon && command -v ceph-osd'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function startS3Server(buckets: string[]): Promise<S3Server> {
  const dir = await mkdtemp(join(tmpdir(), 'tally-rgw-'));
  const [mon, rgw] = (await freePorts(2)) as [number, number];
  const close = async () => {
    for (const file of await readdir(join(dir, 'ceph', 'run')).catch(() => [])) {
      if (!file.endsWith('.pid')) continue;
      const pid = Number((await readFile(join(dir, 'ceph', 'run', file), 'utf8')).trim());
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  const endpoint = await new Promise<string>((resolve, reject) => {
    const proc = spawn(join(ROOT, 'scripts/s3-test-server.sh'), [join(dir, 'ceph'), String(mon), String(rgw)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
    proc.once('exit', (code) => {
      const ready = /ready (http:\/\/\S+)/.exec(out);
      if (code === 0 && ready) resolve(ready[1]!);
      else reject(new Error(`s3-test-server.sh failed (${code}):\n${out}`));
    });
  }).catch(async (error: unknown) => {
    await close();
    throw error;
  });
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
  });
  for (const Bucket of buckets) await client.send(new CreateBucketCommand({ Bucket }));
  client.destroy();
  const pidFile = join(dir, 'ceph', 'run', 'client.rgw.test.pid');
  const killGateway = async () => {
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    process.kill(pid, 'SIGKILL');
    // Gone once signal 0 fails: the port is free for the next start.
    await new Promise<void>((resolve) => {
      const gone = () => {
        try {
          process.kill(pid, 0);
          setImmediate(gone);
        } catch {
          resolve();
        }
      };
      gone();
    });
    await rm(pidFile, { force: true });
  };
  const startGateway = async () => {
    const conf = join(dir, 'ceph', 'ceph.conf');
    await new Promise<void>((resolve, reject) => {
      const proc = spawn('radosgw', ['-c', conf, '-n', 'client.rgw.test'], { stdio: 'ignore' });
      proc.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`radosgw exited ${code}`))));
    });
    // It answers once its frontend is up: the first plain GET that gets an HTTP answer.
    for (;;) {
      const answered = await fetch(endpoint).then(
        () => true,
        () => false,
      );
      if (answered) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { endpoint, close, killGateway, startGateway };
}
