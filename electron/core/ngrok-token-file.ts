/**
 * The ngrok authtoken where no keychain can hold it (a Linux server or container without a Secret Service):
 * a file in the state folder that only its owner may read, as ssh keeps a private key. The keychain is still
 * tried first everywhere; this file is the documented fallback (docs/tunnels.md), written only when the
 * keychain cannot be used, and a copy others can read is refused rather than used.
 * `TALLY_NGROK_AUTHTOKEN` is the other, explicit way in (a stray `NGROK_AUTHTOKEN` never picks the account).
 */
import { registerSecret } from './redact.js';
import { chmod, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { note } from './notes.js';
import { ConfigError } from './errors.js';

/** The file's name in the state folder (the app's data folder, or TALLY_HOME). */
export const NGROK_TOKEN_FILE = 'ngrok-authtoken';
/** The environment variable a producer sets on purpose to hand Tally an ngrok authtoken. */
export const NGROK_TOKEN_ENV = 'TALLY_NGROK_AUTHTOKEN';

export function ngrokTokenPath(home: string): string {
  return join(home, NGROK_TOKEN_FILE);
}

/** The token from the file, or null when there is none. Throws ConfigError when others may read the file. */
export async function readNgrokTokenFile(home: string): Promise<string | null> {
  const path = ngrokTokenPath(home);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  registerSecret(text);
  // POSIX permissions only: Windows has a keychain (Credential Manager) and no such mode bits.
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
    throw new ConfigError(note('ngrokTokenFileOpen', { path }));
  }
  return text.trim() || null;
}

/** Writes the token readable by its owner only (a whole new file, renamed into place), or removes it (null). */
export async function writeNgrokTokenFile(home: string, token: string | null): Promise<void> {
  const path = ngrokTokenPath(home);
  if (token === null) {
    await rm(path, { force: true });
    return;
  }
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${token}\n`, { mode: 0o600 });
  // The mode passed to writeFile is masked by the umask, and an older file may have kept a wider one.
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/** The explicit environment token, or null. */
export function ngrokTokenFromEnv(env: NodeJS.ProcessEnv): string | null {
  const token = env[NGROK_TOKEN_ENV]?.trim() || null;
  registerSecret(token);
  return token;
}
