/**
 * A throwaway nginx on loopback serving one folder, optionally with a per-connection `limit_rate`
 * (the way a throttled origin caps a single connection) and optionally over HTTPS (a certificate from
 * bench/lib/tls-ca.ts). Used as the peer origin for download benches.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './harness.js';
import type { BenchTls } from './tls-ca.js';

export interface Nginx {
  origin: string;
  /** Requests nginx has logged so far (one line each in its access log): how many connections a client used. */
  requests(): Promise<number>;
  stop(): Promise<void>;
}

export async function startNginx(opts: {
  root: string;
  workDir: string;
  limitRate?: string;
  tls?: BenchTls;
}): Promise<Nginx> {
  const port = await freePort();
  await mkdir(join(opts.workDir, 'logs'), { recursive: true });
  const conf = join(opts.workDir, 'nginx.conf');
  await writeFile(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
error_log ${join(opts.workDir, 'logs', 'error.log')} warn;
pid ${join(opts.workDir, 'nginx.pid')};
events { worker_connections 256; }
http {
  log_format bare '$status $request_uri';
  access_log ${join(opts.workDir, 'logs', 'access.log')} bare;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path ${opts.workDir}/body;
  proxy_temp_path ${opts.workDir}/proxy;
  fastcgi_temp_path ${opts.workDir}/fastcgi;
  uwsgi_temp_path ${opts.workDir}/uwsgi;
  scgi_temp_path ${opts.workDir}/scgi;
  server {
    listen 127.0.0.1:${port}${opts.tls ? ' ssl' : ''};
    ${opts.tls ? `ssl_certificate ${opts.tls.certFile};\n    ssl_certificate_key ${opts.tls.keyFile};` : ''}
    root ${opts.root};
    etag on;
    ${opts.limitRate ? `limit_rate ${opts.limitRate};` : ''}
  }
}
`,
  );
  const bin = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  const child: ChildProcess = spawn(bin, ['-c', conf, '-p', opts.workDir], { stdio: 'ignore' });
  await waitForPort(port, child);
  return {
    origin: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests: async () => {
      const log = await readFile(join(opts.workDir, 'logs', 'access.log'), 'utf8').catch(() => '');
      return log.split('\n').filter(Boolean).length;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

function waitForPort(port: number, child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    child.once('error', (error) => {
      done = true;
      reject(new Error(`nginx could not be started (${error.message}): install it (Debian package nginx)`));
    });
    child.once('exit', (code) => {
      if (done) return;
      done = true;
      reject(new Error(`nginx exited with ${code}`));
    });
    const attempt = () => {
      const sock = connect(port, '127.0.0.1');
      sock.once('connect', () => {
        done = true;
        sock.destroy();
        resolve();
      });
      sock.once('error', () => {
        if (!done) setTimeout(attempt, 20);
      });
    };
    attempt();
  });
}
