/**
 * Path tokens for the receiver. The service signs nothing, so a random token in the URL path is the only thing
 * keeping strangers from queueing downloads; each route gets its own token (`hooks` for webhooks, `uploads` for
 * web client recordings) so one can be rotated after a leak without breaking the other.
 * Tokens live in the app data folder, one file per name, mode 0600, written atomically.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../errors.js';
import { syncDir } from '../durable-fs.js';

/** Known token names; others matching `[a-z][a-z0-9-]*` are allowed for future routes. */
export type TokenName = 'hooks' | 'uploads' | (string & {});

const NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{22,256}$/;

/** 128 random bits, base64url (22 characters): unguessable and safe in a URL path. */
export function generateToken(): string {
  return randomBytes(16).toString('base64url');
}

/** sha256 of a token or a candidate: comparing digests takes the same time whatever the lengths. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
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
    try {
      const text = (await readFile(file, 'utf8')).trim();
      if (TOKEN_PATTERN.test(text)) {
        await tightenMode(file);
        this.#remember(name, text);
        return text;
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const token = generateToken();
    await this.#write(name, token);
    return token;
  }

  async #write(name: string, token: string): Promise<void> {
    const file = join(this.dir, tokenFileName(name));
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
    await syncDir(this.dir);
    this.#remember(name, token);
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
