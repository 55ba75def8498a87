/**
 * An update feed on 127.0.0.1 (a generic electron-builder feed: `latest-linux.yml` beside the files it names),
 * and the two stand-ins electron-updater needs to run in plain Node: an app adapter in place of Electron's `app`
 * and an HTTP executor over Node's `http` in place of Electron's `net`. Everything else (reading the feed,
 * comparing versions, downloading, checking the SHA-512, staging the file) is electron-updater's own code.
 */
import { createHash } from 'node:crypto';
import { request, createServer, type IncomingMessage, type RequestOptions } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { AppImageUpdater } from 'electron-updater';
import { ElectronHttpExecutor } from 'electron-updater/out/electronHttpExecutor.js';

/** A release in the feed: its version, its file, and the bytes the feed serves for that file. */
export interface FeedRelease {
  version: string;
  fileName: string;
  /** What the file really is: the SHA-512 in the yml is computed from these. */
  bytes: Buffer;
  /** What the server sends instead (a corrupted download); default `bytes`. */
  served?: Buffer;
}

export interface UpdateFeed {
  url: string;
  /** Every path requested, in order. */
  requests: string[];
  publish(release: FeedRelease): void;
  close(): Promise<void>;
}

/** The yml electron-builder writes for a generic feed: the file with its SHA-512 (base64) and size. */
export function latestYml(release: FeedRelease): string {
  const sha512 = createHash('sha512').update(release.bytes).digest('base64');
  return [
    `version: ${release.version}`,
    'files:',
    `  - url: ${release.fileName}`,
    `    sha512: ${sha512}`,
    `    size: ${release.bytes.length}`,
    `path: ${release.fileName}`,
    `sha512: ${sha512}`,
    `releaseDate: '2026-11-01T00:00:00.000Z'`,
    '',
  ].join('\n');
}

/** A real HTTP server on 127.0.0.1 port 0 serving one release. */
export async function startUpdateFeed(): Promise<UpdateFeed> {
  const files = new Map<string, Buffer>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://feed').pathname;
    requests.push(path);
    const body = files.get(path);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tally`,
    requests,
    publish(release) {
      files.clear();
      files.set('/tally/latest-linux.yml', Buffer.from(latestYml(release)));
      files.set(`/tally/${release.fileName}`, release.served ?? release.bytes);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * STAND-IN for Electron's `net`: electron-updater's own HTTP executor (its download, redirect and SHA-512 code),
 * with the one method that would call `net.request` sending through Node's `http` instead.
 */
export class NodeHttpStandin extends ElectronHttpExecutor {
  override createRequest(
    options: RequestOptions,
    callback: (response: IncomingMessage) => void,
  ): ReturnType<ElectronHttpExecutor['createRequest']> {
    // Node's request has what electron-updater calls on it (abort, end, on); Electron's type names more.
    return request(options, callback) as unknown as ReturnType<ElectronHttpExecutor['createRequest']>;
  }
}

/**
 * A real electron-updater AppImageUpdater for a Tally at `version`, whose app is a STAND-IN for Electron's (the
 * data and cache folders under `dir`, an app-update.yml as electron-builder writes one) and whose HTTP is Node's.
 * `APPIMAGE` must name a file (the running AppImage) for it to work, as in a real AppImage run.
 */
export function appImageUpdater(
  dir: string,
  version: string,
): { updater: AppImageUpdater; quit: (code: number) => void } {
  const configPath = join(dir, 'app-update.yml');
  writeFileSync(configPath, 'provider: generic\nurl: http://127.0.0.1:9/unused\nupdaterCacheDirName: tally-updater\n');
  const quitHandlers: ((code: number) => void)[] = [];
  const updater = new AppImageUpdater(null, {
    version,
    name: 'Tally',
    isPackaged: true,
    appUpdateConfigPath: configPath,
    userDataPath: join(dir, 'data'),
    baseCachePath: join(dir, 'cache'),
    whenReady: () => Promise.resolve(),
    relaunch: () => {},
    quit: () => {},
    onQuit: (handler: (code: number) => void) => void quitHandlers.push(handler),
  });
  (updater as unknown as { httpExecutor: NodeHttpStandin }).httpExecutor = new NodeHttpStandin();
  // The running AppImage carries no block map here, so the download is a whole file (the path a first update takes).
  updater.disableDifferentialDownload = true;
  // The stand-in app's quit: electron-updater installs a staged update from its quit handler.
  return { updater, quit: (code) => quitHandlers.forEach((handler) => handler(code)) };
}

/** Where electron-updater stages a downloaded update until the app quits. */
export function pendingFolder(dir: string): string {
  return join(dir, 'cache', 'tally-updater', 'pending');
}
