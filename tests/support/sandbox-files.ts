/**
 * Small pieces every suite that runs `tally` against the sandbox needs: the environment that points it at a
 * sandbox (credentials from the environment, so no keychain is touched) and the SHA-256 of a saved file.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { sandboxEnv } from '../../electron/cli/sandbox.js';
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
  // The sandbox's variables as `tally sandbox` prints them.
  return { TALLY_HOME: home, ...sandboxEnv(sb) };
}
