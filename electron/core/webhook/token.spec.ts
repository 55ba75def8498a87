import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../errors.js';
import { TokenStore, generateToken, safeEqual, tokenFileName } from './token.js';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tally-token-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';

describe('TokenStore', () => {
  it('creates a 128-bit base64url token, persisted with mode 0600, and returns it again after a reopen', async () => {
    const store = await TokenStore.open(dir);
    const token = await store.get('hooks');
    expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(16);
    const file = join(dir, 'webhook-token');
    expect((await readFile(file, 'utf8')).trim()).toBe(token);
    if (posix) expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await (await TokenStore.open(dir)).get('hooks')).toBe(token);
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps independent named tokens', async () => {
    const store = await TokenStore.open(dir);
    const hooks = await store.get('hooks');
    const uploads = await store.get('uploads');
    expect(uploads).not.toBe(hooks);
    expect(tokenFileName('uploads')).toBe('uploads-token');
    expect((await readFile(join(dir, 'uploads-token'), 'utf8')).trim()).toBe(uploads);
  });

  it('rotates one token atomically, persists it, and tells listeners the name only', async () => {
    const store = await TokenStore.open(dir);
    const before = await store.get('hooks');
    const uploads = await store.get('uploads');
    const heard: unknown[] = [];
    store.on('rotated', (...args) => heard.push(args));
    const after = await store.rotate('hooks');
    expect(after).not.toBe(before);
    expect(store.peek('hooks')).toBe(after);
    expect(store.matches('hooks', after)).toBe(true);
    expect(store.matches('hooks', before)).toBe(false);
    expect(await store.get('uploads')).toBe(uploads);
    expect(heard).toEqual([['hooks']]);
    expect(await (await TokenStore.open(dir)).get('hooks')).toBe(after);
  });

  it('gives concurrent first callers the same token', async () => {
    const store = await TokenStore.open(dir);
    const tokens = await Promise.all(Array.from({ length: 10 }, () => store.get('hooks')));
    expect(new Set(tokens).size).toBe(1);
  });

  it('replaces a damaged token file and tightens a too-open one', async () => {
    await writeFile(join(dir, 'webhook-token'), 'not a token!\n');
    const fresh = await (await TokenStore.open(dir)).get('hooks');
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const kept = generateToken();
    await writeFile(join(dir, 'uploads-token'), `${kept}\n`, { mode: 0o644 });
    await chmod(join(dir, 'uploads-token'), 0o644);
    expect(await (await TokenStore.open(dir)).get('uploads')).toBe(kept);
    if (posix) expect((await stat(join(dir, 'uploads-token'))).mode & 0o777).toBe(0o600);
  });

  it('rejects names that could escape the folder', async () => {
    const store = await TokenStore.open(dir);
    await expect(store.get('../x')).rejects.toBeInstanceOf(ValidationError);
    await expect(store.rotate('A')).rejects.toBeInstanceOf(ValidationError);
    expect(store.matches('hooks', 'anything')).toBe(false);
  });
});

describe('safeEqual', () => {
  it('compares whole strings of any length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
