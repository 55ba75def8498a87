/**
 * A real nginx on loopback serving one folder as the recordings' origin, with an access log of the bytes each
 * response sent ($body_bytes_sent, also for a response cut short): how many origin bytes the receivers took.
 * Optionally paced per connection (`limit_rate`), so a download is still running when a test acts on it.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

export interface NginxOrigin {
  origin: string;
  /** Bytes of response bodies sent so far, per request path (from the access log). */
  bytesSent(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Resolves once nginx accepts connections on `port` (it says nothing when it is ready). */
function accepting(port: number, exited: Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    let over = false;
    void exited.then(() => {
      over = true;
      reject(new Error('nginx exited before it listened (see its error.log)'));
    });
    const attempt = () => {
      if (over) return;
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => setImmediate(attempt));
    };
    attempt();
  });
}

export async function startNginxOrigin(opts: { root: string; workDir: string; limitRate?: string }) {
  const port = await freePort();
  const logs = join(opts.workDir, 'logs');
  await mkdir(logs, { recursive: true });
  const conf = join(opts.workDir, 'nginx.conf');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((t) => `${t}_temp_path ${join(opts.workDir, t)};`)
    .join('\n  ');
  await writeFile(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
error_log ${join(logs, 'error.log')} warn;
pid ${join(opts.workDir, 'nginx.pid')};
events { worker_connections 256; }
http {
  log_format sent '$body_bytes_sent $uri';
  access_log ${join(logs, 'access.log')} sent;
  ${temp}
  server {
    listen 127.0.0.1:${port};
    root ${opts.root};
    etag on;
    ${opts.limitRate ? `limit_rate ${opts.limitRate};` : ''}
  }
}
`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', opts.workDir], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => undefined);
  await accepting(port, exited);
  const origin: NginxOrigin = {
    origin: `http://127.0.0.1:${port}`,
    async bytesSent() {
      const sent = new Map<string, number>();
      for (const line of (await readFile(join(logs, 'access.log'), 'utf8')).split('\n')) {
        const [bytes, uri] = line.split(' ');
        if (bytes && uri) sent.set(uri, (sent.get(uri) ?? 0) + Number(bytes));
      }
      return sent;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  return origin;
}
