/**
 * Small pieces every suite that runs `tally` against the sandbox needs: the environment that points it at a
 * sandbox (credentials from the environment, so no keychain is touched) and the SHA-256 of a saved file.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Sandbox } from '../../electron/core/sandbox/index.js';

/** The hex SHA-256 of a file, streamed (recordings may be large). */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => hash.update(c))
      .once('error', reject)
      .once('end', () => resolve(hash.digest('hex')));
  });
}

/** Environment for `tally listen` against the sandbox, with its state in `home`. */
export function listenEnv(sb: Sandbox, home: string): Record<string, string> {
  return {
    TALLY_HOME: home,
    TALLY_DOWNLOAD_ORIGINS: sb.downloadOrigin,
    TALLY_BASE_URL: sb.endpoints.baseUrl,
    TALLY_CONSOLE_API_URL: sb.endpoints.consoleApiUrl,
    TALLY_ADMIN_URL: sb.endpoints.adminUrl,
    TALLY_SERVICE_ID: sb.credentials.serviceId,
    TALLY_SECRET: sb.credentials.secret,
  };
}
