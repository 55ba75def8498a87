/**
 * Path tokens for the receiver. The service signs nothing, so a random token in the URL path is the only thing
 * keeping strangers from queueing downloads; each route gets its own token (`hooks` for webhooks, `uploads` for
 * web client recordings) so one can be rotated after a leak without breaking the other.
 * Tokens live in the app data folder, one file per name, mode 0600, written atomically, with a copy beside it
 * (`<file>.copy`): a damaged token file silently changed the webhook URL, and the registered one answered 404
 * while every recording was lost (issue 20). The copy brings the same token back; only when both are damaged is
 * a new token made, and `replaced` says so (the URL must be registered again).
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { syncDir } from '../durable-fs.js';
import { registerSecret } from '../redact.js';

/** Known token names; others matching `[a-z][a-z0-9-]*` are allowed for future routes. */
export type TokenName = 'hooks' | 'uploads' | (string & {});

const NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,256}$/;

/** 128 random bits, base64url (22 characters): unguessable and safe in a URL path. */
export function generateToken(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * sha256 of a token or a candidate: comparing digests takes the same time whatever the lengths. One-shot
 * (`crypto.hash`): it runs on every request, and a Hash object per call was 2 % of a webhook burst's CPU.
 */
function digest(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/** Constant-time string comparison (hashing first hides the length too). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b)) && a.length === b.length;
}

/** The file holding a token: `webhook-token` for `hooks` (the name users see documented), else `<name>-token`. */
export function tokenFileName(name: TokenName): string {
  assertName(name);
  return name === 'hooks' ? 'webhook-token' : `${name}-token`;
}

interface TokenEvents {
  /** A token changed; listeners re-read it with `get` (the value is never put in an event). */
  rotated: [name: TokenName];
  /**
   * A token file and its copy were both damaged: a new token was made, so the URL the service holds is dead until
   * it is registered again. `why` says what was found, for the producer.
   */
  replaced: [name: TokenName, why: string];
}

/** The copy kept beside a token file. */
export function tokenCopyName(name: TokenName): string {
  return `${tokenFileName(name)}.copy`;
}

/** Named, persisted path tokens. Created on first use. */
export class TokenStore extends EventEmitter<TokenEvents> {
  readonly dir: string;
  readonly #cache = new Map<string, string>();
  /** The digest of each cached token, so a check hashes only the candidate (it runs on every request). */
  readonly #digests = new Map<string, Buffer>();
  readonly #ops = new Map<string, Promise<string>>();

  private constructor(dir: string) {
    super();
    this.dir = dir;
  }

  static async open(dir: string): Promise<TokenStore> {
    await mkdir(dir, { recursive: true });
    return new TokenStore(dir);
  }

  /** The token for `name`, created and persisted if there is none (or the file holds garbage). */
  get(name: TokenName): Promise<string> {
    try {
      assertName(name);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const cached = this.#cache.get(name);
    if (cached !== undefined) return Promise.resolve(cached);
    return this.#serial(name, async () => this.#cache.get(name) ?? (await this.#load(name)));
  }

  /** Replaces the token for `name`; the old one stops working as soon as the receiver hears `rotated`. */
  async rotate(name: TokenName): Promise<string> {
    assertName(name);
    const token = await this.#serial(name, async () => {
      const fresh = generateToken();
      await this.#write(name, fresh);
      return fresh;
    });
    this.emit('rotated', name);
    return token;
  }

  /** Writes every loaded token (and its copy) again: the state folder was deleted and recreated under Tally. */
  async restore(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const [name, token] of this.#cache)
      await this.#serial(name, async () => (await this.#write(name, token), token));
  }

  /** The token for `name` if `get` has loaded it already (synchronous, for building URLs). */
  peek(name: TokenName): string | undefined {
    return this.#cache.get(name);
  }

  /** Constant-time check of a candidate against a token already loaded with `get`. */
  matches(name: TokenName, candidate: string): boolean {
    const token = this.#cache.get(name);
    const expected = this.#digests.get(name);
    if (token === undefined || expected === undefined) return false;
    return timingSafeEqual(expected, digest(candidate)) && token.length === candidate.length;
  }

  #remember(name: string, token: string): void {
    // Held from now on: no log line or report may show it (issue 32).
    registerSecret(token);
    this.#cache.set(name, token);
    this.#digests.set(name, digest(token));
  }

  #serial(name: string, op: () => Promise<string>): Promise<string> {
    const previous = this.#ops.get(name) ?? Promise.resolve('');
    const next = previous.catch(() => '').then(op);
    this.#ops.set(name, next);
    return next;
  }

  async #load(name: string): Promise<string> {
    const file = join(this.dir, tokenFileName(name));
    const copy = join(this.dir, tokenCopyName(name));
    const primary = await readToken(file);
    const spare = await readToken(copy);
    if (primary.token !== null) {
      await tightenMode(file);
      // An install from before the copy, or a damaged copy: make it now, while the token is known good.
      if (spare.token !== primary.token) await this.#write(name, primary.token);
      else this.#remember(name, primary.token);
      return primary.token;
    }
    if (spare.token !== null) {
      await this.#write(name, spare.token);
      return spare.token;
    }
    const token = generateToken();
    await this.#write(name, token);
    // Nothing at all is a first start; anything else means the URL the service holds just stopped working.
    if (primary.found || spare.found) {
      const why = `${tokenFileName(name)} was ${primary.found ? 'damaged' : 'missing'} and its copy ${spare.found ? 'damaged' : 'missing'}`;
      this.emit('replaced', name, why);
    }
    return token;
  }

  async #write(name: string, token: string): Promise<void> {
    // The copy first: a crash between the two leaves the old primary or the new copy, never two bad files.
    await this.#writeFile(tokenCopyName(name), token);
    await this.#writeFile(tokenFileName(name), token);
    await syncDir(this.dir);
    this.#remember(name, token);
  }

  async #writeFile(base: string, token: string): Promise<void> {
    const file = join(this.dir, base);
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      const handle = await open(tmp, 'wx', 0o600);
      try {
        await handle.writeFile(`${token}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(tmp, file);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }
}

/** A token file's valid token (null when missing or damaged), and whether there was a file at all. */
async function readToken(file: string): Promise<{ token: string | null; found: boolean }> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    return { token: TOKEN_PATTERN.test(text) ? text : null, found: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { token: null, found: false };
    // A folder or an unreadable file where the token should be is damage, not a reason to stop receiving.
    if (code === 'EISDIR' || code === 'EACCES' || code === 'EIO') return { token: null, found: true };
    throw error;
  }
}

function assertName(name: string): void {
  if (!NAME_PATTERN.test(name)) throw new ValidationError(['name'], `"${name.slice(0, 40)}" is not a token name.`);
}

/** A token file readable by others (copied around, restored from a backup) is put back to 0600. */
async function tightenMode(file: string): Promise<void> {
  if (process.platform === 'win32') return;
  const info = await stat(file);
  if ((info.mode & 0o077) !== 0) await chmod(file, 0o600);
}
