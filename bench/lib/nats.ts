/**
 * nats-server with JetStream for the studio bench (the Debian package `nats-server`), on a free loopback port
 * with its storage in the bench's temp folder; ready when it says so.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cpuSecondsOf } from './cli-process.js';
import { freePort } from './harness.js';

export interface NatsBench {
  url: string;
  /** CPU seconds the server has used so far. */
  cpuSeconds(): Promise<number>;
  stop(): Promise<void>;
}

export async function startNats(workDir: string): Promise<NatsBench> {
  const port = await freePort();
  const proc = spawn('nats-server', ['-js', '-sd', join(workDir, 'nats'), '-a', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    const onData = (c: Buffer) => {
      log += c.toString();
      if (/Server is ready/.test(log)) resolve();
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`nats-server exited (${code}):\n${log}`)));
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    cpuSeconds: () => cpuSecondsOf(proc.pid as number),
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
