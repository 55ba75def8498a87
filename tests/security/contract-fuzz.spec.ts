/**
 * Contract fuzzing: every request of the contract, with invalid argument tuples (wrong arity, wrong types,
 * extra and prototype-polluting keys, NaN/Infinity, oversized strings, deep junk), through the three doors a
 * renderer has: `dispatchRequest` (shared by both transports), the Electron IPC registration with a fake
 * `ipcMain`, and the WebSocket of `tally serve`. Each must answer `invalid_input` without calling the
 * handler, without echoing the input, and without polluting a prototype. The seed is printed; rerun a
 * failure with TALLY_FUZZ_SEED=<seed>.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { REQUEST_NAMES, uiProtocols } from '../../electron/contract.js';
import { createAppCore } from '../../electron/core/app/app-core.js';
import { dispatchRequest } from '../../electron/core/app/dispatch.js';
import type { AppCore } from '../../electron/core/app/types.js';
import { startUiServer, type UiServer } from '../../electron/core/app/ui-server.js';
import { MemorySecretStore } from '../../electron/core/credentials.js';
import { registerIpc, type IpcMainLike, type SenderEvent } from '../../electron/main/ipc.js';
import {
  ECHO_CANARY,
  VALID_ARGS,
  invalidCases,
  recordingHandlers,
  type InvalidCase,
} from './support/contract-cases.js';

const SEED = Number(process.env.TALLY_FUZZ_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Math.max(25, Math.floor(Number(process.env.TALLY_FUZZ_COUNT ?? 0) / 400));

/** Plays `ipcMain`: records handlers, `invoke` plays a renderer. */
class FakeIpcMain implements IpcMainLike {
  readonly handlers = new Map<string, (event: SenderEvent, ...args: unknown[]) => unknown>();
  handle(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => unknown): void {
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
  on(): void {}
  removeListener(): void {}
  invoke(channel: string, event: SenderEvent, ...args: unknown[]): unknown {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return handler(event, ...args);
  }
}

function describeCase(c: InvalidCase): string {
  return `${c.name} / ${c.label} (seed ${SEED})`;
}

function expectPrototypesClean(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
}

const cases = invalidCases(SEED, ROUNDS);

describe(`contract fuzz (seed ${SEED}, ${cases.length} cases)`, () => {
  beforeAll(() => {
    console.log(`contract fuzz: seed ${SEED}, ${cases.length} invalid cases over ${REQUEST_NAMES.length} requests`);
  });

  it('covers every request of the contract with at least 30 invalid cases', () => {
    for (const name of REQUEST_NAMES) {
      expect(cases.filter((c) => c.name === name).length, name).toBeGreaterThanOrEqual(30);
    }
  });

  it('dispatchRequest: valid arguments reach the handler (control)', async () => {
    const { handlers, calls } = recordingHandlers();
    for (const name of REQUEST_NAMES) {
      expect(await dispatchRequest(handlers, name, VALID_ARGS[name]), name).toEqual({
        ok: true,
        result: { from: name },
      });
    }
    expect(calls.map((c) => c.name)).toEqual(REQUEST_NAMES);
  });

  it('dispatchRequest: every invalid tuple is invalid_input and never reaches a handler', async () => {
    const { handlers, calls } = recordingHandlers();
    for (const c of cases) {
      const envelope = await dispatchRequest(handlers, c.name, c.args);
      expect(envelope, describeCase(c)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      const message = (envelope as { error: { message: string } }).error.message;
      expect(message.length, describeCase(c)).toBeLessThan(2000);
      expect(message, describeCase(c)).not.toContain(ECHO_CANARY);
    }
    expect(calls).toEqual([]);
    expectPrototypesClean();
  });

  it('dispatchRequest: unknown and hostile request names are invalid_input', async () => {
    const { handlers, calls } = recordingHandlers();
    const names: unknown[] = [
      '',
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'channels:',
      'CHANNELS:LIVE',
      'channels:live ',
      'app:info\u0000',
      42,
      null,
      undefined,
      {},
      ['app:info'],
      Symbol.iterator,
      `x${ECHO_CANARY}`.repeat(100),
    ];
    for (const name of names) {
      const envelope = await dispatchRequest(handlers, name, []);
      expect(envelope, String(name?.toString?.() ?? name)).toMatchObject({
        ok: false,
        error: { code: 'invalid_input' },
      });
      expect(JSON.stringify(envelope).length).toBeLessThan(300);
    }
    expect(calls).toEqual([]);
  });

  it('Electron IPC (registerIpc with a fake ipcMain): every invalid tuple is invalid_input, handler untouched', async () => {
    const ipcMain = new FakeIpcMain();
    const { handlers, calls } = recordingHandlers();
    const logs: string[] = [];
    registerIpc({ ipcMain, handlers, isTrustedSender: () => true, log: (l) => logs.push(l) });
    const event: SenderEvent = { sender: {}, senderFrame: { url: 'file:///app/index.html', parent: null } };
    for (const name of REQUEST_NAMES) {
      expect(await ipcMain.invoke(`tally:${name}`, event, ...VALID_ARGS[name]), name).toEqual({
        ok: true,
        result: { from: name },
      });
    }
    calls.length = 0;
    // IPC always delivers an argument list, so only the array cases apply here.
    const ipcCases = cases.filter((c): c is InvalidCase & { args: unknown[] } => Array.isArray(c.args));
    expect(ipcCases.length).toBeGreaterThan(cases.length / 2);
    for (const c of ipcCases) {
      const reply = await ipcMain.invoke(`tally:${c.name}`, event, ...c.args);
      expect(reply, describeCase(c)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      expect((reply as { error: { message: string } }).error.message, describeCase(c)).not.toContain(ECHO_CANARY);
    }
    expect(calls).toEqual([]);
    expect(logs.join('\n')).not.toContain(ECHO_CANARY);
    expectPrototypesClean();
  });

  // Relative folders and `~` are taken from the home folder and saved absolute (electron/core/settings.spec.ts).
  it('the real app core refuses what only it can judge (blank folders, non-origins) with invalid_input', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-fuzz-core-'));
    const core = await createAppCore({
      home,
      secrets: new MemorySecretStore(),
      transport: 'ws',
      env: {},
      version: '0.0.0',
    });
    try {
      const before = await dispatchRequest(core.handlers, 'settings:get', []);
      const patches: unknown[] = [
        { recordingsFolder: '   ' },
        { uploadOrigins: ['javascript:alert(1)'] },
        { uploadOrigins: ['*'] },
        { uploadOrigins: ['file:///etc'] },
      ];
      for (const patch of patches) {
        const envelope = await dispatchRequest(core.handlers, 'settings:update', [patch]);
        expect(envelope, JSON.stringify(patch)).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      }
      // Nothing of a refused patch was kept.
      expect(await dispatchRequest(core.handlers, 'settings:get', [])).toEqual(before);
    } finally {
      await core.stop();
      await rm(home, { recursive: true, force: true });
    }
  });

  describe('WebSocket of tally serve', () => {
    let server: UiServer;
    let staticDir: string;
    const { handlers, calls } = recordingHandlers();
    const core: AppCore = {
      handlers,
      on: () => () => {},
      traySnapshot: () => {
        throw new Error('not used');
      },
      setVisible: () => {},
      start: async () => {},
      stop: async () => {},
    };

    beforeAll(async () => {
      staticDir = await mkdtemp(join(tmpdir(), 'tally-fuzz-ui-'));
      server = await startUiServer({ core, staticDir, token: 'fuzz-token' });
    });
    afterAll(async () => {
      await server?.close();
      await rm(staticDir, { recursive: true, force: true });
    });

    function connect(): Promise<WebSocket> {
      return new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, uiProtocols({ key: 'fuzz-token' }), {
          origin: server.origin,
        });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    }

    /** Sends raw frames and collects the answers by id (and id-less errors) until all have come. */
    async function exchange(ws: WebSocket, frames: string[], expected: number): Promise<Record<string, unknown>[]> {
      const answers: Record<string, unknown>[] = [];
      const done = new Promise<void>((resolve, reject) => {
        ws.on('message', (data) => {
          answers.push(JSON.parse(String(data)) as Record<string, unknown>);
          if (answers.length === expected) resolve();
        });
        ws.once('close', () => reject(new Error(`socket closed after ${answers.length}/${expected} answers`)));
      });
      for (const frame of frames) ws.send(frame);
      await done;
      return answers;
    }

    it('answers every JSON-representable invalid tuple with invalid_input and calls nothing', async () => {
      // Only tuples that survive JSON unchanged: NaN would arrive as null and prove something else.
      const jsonCases = cases.filter((c) => {
        try {
          return c.args !== undefined && isDeepStrictEqual(JSON.parse(JSON.stringify(c.args)), c.args);
        } catch {
          return false;
        }
      });
      expect(jsonCases.length).toBeGreaterThan(200);
      const ws = await connect();
      try {
        const frames = jsonCases.map((c, id) => JSON.stringify({ type: 'invoke', id, name: c.name, args: c.args }));
        const answers = await exchange(ws, frames, frames.length);
        for (const answer of answers) {
          const c = jsonCases[answer.id as number] as InvalidCase;
          expect(answer, describeCase(c)).toMatchObject({
            type: 'result',
            ok: false,
            error: { code: 'invalid_input' },
          });
          expect(JSON.stringify(answer), describeCase(c)).not.toContain(ECHO_CANARY);
        }
      } finally {
        ws.close();
      }
      expect(calls).toEqual([]);
      expectPrototypesClean();
    });

    it('refuses malformed frames with invalid_input and keeps serving valid requests', async () => {
      const ws = await connect();
      try {
        const frames = [
          'not json',
          '{"type":"invoke"}',
          '{"type":"invoke","id":-1,"name":"app:info","args":[]}',
          '{"type":"invoke","id":1.5,"name":"app:info","args":[]}',
          '{"type":"invoke","id":"7","name":"app:info","args":[]}',
          '{"type":"nope","id":3}',
          '{"__proto__":{"type":"invoke"},"id":4,"name":"app:info","args":[]}',
          'null',
          '[]',
          JSON.stringify({
            type: 'invoke',
            id: 5,
            name: 'settings:update',
            args: JSON.parse('[{"__proto__":{"polluted":"yes"}}]'),
          }),
        ];
        const answers = await exchange(ws, frames, frames.length);
        for (const answer of answers) {
          const error = (answer.error ?? {}) as { code?: string };
          expect(error.code, JSON.stringify(answer)).toBe('invalid_input');
        }
        const [ok] = await exchange(ws, [JSON.stringify({ type: 'invoke', id: 99, name: 'app:info', args: [] })], 1);
        expect(ok).toMatchObject({ id: 99, ok: true, result: { from: 'app:info' } });
      } finally {
        ws.close();
      }
      expect(calls.map((c) => c.name)).toEqual(['app:info']);
      expectPrototypesClean();
    });

    it('drops a frame over the 1 MiB limit by closing that socket only', async () => {
      const ws = await connect();
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      ws.send(JSON.stringify({ type: 'invoke', id: 1, name: 'clipboard:write', args: ['x'.repeat(2 * 1024 * 1024)] }));
      expect(await closed).toBe(1009);
      const again = await connect();
      try {
        const [ok] = await exchange(again, [JSON.stringify({ type: 'invoke', id: 1, name: 'app:info', args: [] })], 1);
        expect(ok).toMatchObject({ ok: true });
      } finally {
        again.close();
      }
    });
  });
});
