import { describe, expect, it } from 'vitest';
import { REQUEST_NAMES } from '../contract.js';
import type { ChannelView, RecordingView, RequestName } from '../contract.js';
import { BadCredentialsError, UnknownChannelError } from '../core/errors.js';
import { FakeWebContents } from '../../tests/fakes/electron.js';
import { createSenderCheck, EventPusher, isAppPageUrl, registerIpc } from './ipc.js';
import type { FrameLike, IpcMainLike, SenderEvent } from './ipc.js';
import { VALID_ARGS, recordingHandlers } from '../../tests/security/support/contract-cases.js';
import { tunnelStatus } from '../../tests/support/tunnels/tunnel-status.js';

const FILE_URL = 'file:///Applications/Tally.app/Contents/Resources/app.asar/dist/renderer/index.html';
const page = { fileUrl: FILE_URL };

/** Records handlers like ipcMain does; `invoke` plays a renderer calling one. */
class FakeIpcMain implements IpcMainLike {
  readonly handlers = new Map<string, (event: SenderEvent, ...args: unknown[]) => unknown>();
  readonly listeners = new Map<string, Set<(event: SenderEvent, ...args: unknown[]) => void>>();
  handle(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => unknown) {
    if (this.handlers.has(channel)) throw new Error(`second handler for ${channel}`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string) {
    this.handlers.delete(channel);
  }
  on(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => void) {
    if (!this.listeners.has(channel)) this.listeners.set(channel, new Set());
    this.listeners.get(channel)!.add(listener);
  }
  removeListener(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => void) {
    this.listeners.get(channel)?.delete(listener);
  }
  invoke(channel: string, event: SenderEvent, ...args: unknown[]) {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return handler(event, ...args);
  }
  emit(channel: string, event: SenderEvent) {
    for (const listener of this.listeners.get(channel) ?? []) listener(event);
  }
}

function frame(url: string, parent: FrameLike | null = null): FrameLike {
  return { url, parent };
}

function setup() {
  const ipcMain = new FakeIpcMain();
  const contents = new FakeWebContents();
  const { handlers, calls } = recordingHandlers();
  const logs: string[] = [];
  let readies = 0;
  const isTrustedSender = createSenderCheck({ getWebContents: () => contents, page });
  const dispose = registerIpc({
    ipcMain,
    handlers,
    isTrustedSender,
    onReady: () => readies++,
    log: (l) => logs.push(l),
  });
  const trusted: SenderEvent = { sender: contents, senderFrame: frame(FILE_URL) };
  return { ipcMain, contents, handlers, calls, logs, trusted, dispose, readies: () => readies };
}

/** Arguments every request accepts (shared with the contract fuzzer). */
const VALID = VALID_ARGS;

describe('isAppPageUrl', () => {
  it('accepts only our index.html (any hash or query), or the configured dev server', () => {
    expect(isAppPageUrl(FILE_URL, page)).toBe(true);
    expect(isAppPageUrl(`${FILE_URL}#settings`, page)).toBe(true);
    expect(isAppPageUrl(`${FILE_URL}?x=1`, page)).toBe(true);
    expect(isAppPageUrl(FILE_URL.replace('index.html', 'other.html'), page)).toBe(false);
    expect(isAppPageUrl('file:///tmp/dist/renderer/index.html', page)).toBe(false);
    expect(isAppPageUrl('https://evil.example/index.html', page)).toBe(false);
    expect(isAppPageUrl('http://127.0.0.1:5173/', page)).toBe(false);
    expect(isAppPageUrl('not a url', page)).toBe(false);
    const dev = { ...page, devServerUrl: 'http://127.0.0.1:5173' };
    expect(isAppPageUrl('http://127.0.0.1:5173/', dev)).toBe(true);
    expect(isAppPageUrl('http://127.0.0.1:5174/', dev)).toBe(false);
    expect(isAppPageUrl('http://127.0.0.1:5173/@fs/etc/passwd', dev)).toBe(false);
  });
});

describe('registerIpc', () => {
  it('registers every contract request plus the ready signal, and removes them on dispose', () => {
    const { ipcMain, dispose } = setup();
    expect([...ipcMain.handlers.keys()].sort()).toEqual(REQUEST_NAMES.map((n) => `tally:${n}`).sort());
    expect(ipcMain.listeners.get('tally:ready')?.size).toBe(1);
    dispose();
    expect(ipcMain.handlers.size).toBe(0);
    expect(ipcMain.listeners.get('tally:ready')?.size).toBe(0);
  });

  it('passes validated arguments to the handler and wraps the result', async () => {
    const { ipcMain, trusted, calls } = setup();
    for (const name of REQUEST_NAMES) {
      await expect(ipcMain.invoke(`tally:${name}`, trusted, ...VALID[name]), name).resolves.toEqual({
        ok: true,
        result: { from: name },
      });
    }
    expect(calls.map((c) => c.name)).toEqual(REQUEST_NAMES);
    expect(calls.find((c) => c.name === 'channels:end')?.args).toEqual(['1581324488053_Dc5aQ']);
  });

  it('refuses untrusted senders: another page, a subframe, no frame, another webContents, no window', async () => {
    const { ipcMain, contents, calls, logs } = setup();
    const untrusted: SenderEvent[] = [
      { sender: contents, senderFrame: frame('https://evil.example/') },
      { sender: contents, senderFrame: frame('file:///tmp/evil/index.html') },
      { sender: contents, senderFrame: frame(FILE_URL, frame(FILE_URL)) },
      { sender: contents, senderFrame: null },
      { sender: new FakeWebContents(), senderFrame: frame(FILE_URL) },
    ];
    for (const event of untrusted) {
      const reply = await ipcMain.invoke('tally:credentials:set', event, { serviceId: 'svc', secret: 'x' });
      expect(reply).toEqual({ ok: false, error: { code: 'forbidden', message: expect.any(String) } });
    }
    expect(calls).toEqual([]);
    expect(logs.every((l) => l.includes('untrusted'))).toBe(true);

    const noWindow = createSenderCheck({ getWebContents: () => null, page });
    expect(noWindow({ sender: contents, senderFrame: frame(FILE_URL) })).toBe(false);
  });

  it('rejects invalid arguments for every request with invalid_input, before the handler', async () => {
    const { ipcMain, trusted, calls } = setup();
    for (const name of REQUEST_NAMES) {
      const reply = await ipcMain.invoke(`tally:${name}`, trusted, 12345, 'extra', null);
      expect(reply, name).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    }
    const specific: [RequestName, unknown[]][] = [
      ['channels:end', ['']],
      ['channels:search', [{ since: '2024-01-02T00:00:00Z', until: '2024-01-01T00:00:00Z' }]],
      ['settings:update', [{ pollIntervalSec: 1 }]],
      ['settings:update', [{ apiSecret: 'x' }]],
      ['credentials:set', [{ serviceId: 'svc' }]],
      ['clipboard:write', ['x'.repeat(70_000)]],
      ['recordings:retry', [{ toString: 'k1' }]],
    ];
    for (const [name, args] of specific) {
      const reply = (await ipcMain.invoke(`tally:${name}`, trusted, ...args)) as {
        ok: boolean;
        error: { code: string; message: string };
      };
      expect(reply.error.code, name).toBe('invalid_input');
    }
    expect(calls).toEqual([]);
  });

  it('does not echo a rejected secret back in the validation message', async () => {
    const { ipcMain, trusted } = setup();
    const secret = 'x'.repeat(5000) + 'SECRET-TAIL';
    const reply = (await ipcMain.invoke('tally:credentials:set', trusted, { serviceId: 'svc', secret })) as {
      error: { message: string };
    };
    expect(reply.error.message).not.toContain('SECRET-TAIL');
  });

  it('wraps errors: TallyError keeps its code and message, anything else is generic and logged redacted', async () => {
    const { ipcMain, trusted, handlers, logs } = setup();
    handlers['channels:end'] = async () => {
      throw new UnknownChannelError('ch-9');
    };
    handlers['credentials:test'] = async () => {
      throw new BadCredentialsError();
    };
    handlers['channels:live'] = async () => {
      throw new TypeError('request failed with body {"serviceId":"svc","secret":"hunter2-secret"}');
    };
    await expect(ipcMain.invoke('tally:channels:end', trusted, 'ch-9')).resolves.toEqual({
      ok: false,
      error: {
        code: 'unknown_channel',
        message: 'The service has no live channel with ID "ch-9".',
        params: { channel: 'ch-9' },
      },
    });
    await expect(ipcMain.invoke('tally:credentials:test', trusted)).resolves.toMatchObject({
      ok: false,
      error: { code: 'bad_credentials' },
    });

    const reply = (await ipcMain.invoke('tally:channels:live', trusted)) as {
      ok: false;
      error: Record<string, unknown>;
    };
    expect(reply.error.code).toBe('internal');
    expect(Object.keys(reply.error).sort()).toEqual(['code', 'message']);
    expect(JSON.stringify(reply)).not.toMatch(/hunter2|TypeError|at /);
    const logged = logs.join('\n');
    expect(logged).toContain('channels:live failed');
    expect(logged).not.toContain('hunter2');
  });

  it('counts the ready signal only from the trusted page', () => {
    const { ipcMain, trusted, contents, readies } = setup();
    ipcMain.emit('tally:ready', { sender: contents, senderFrame: frame('https://evil.example/') });
    expect(readies()).toBe(0);
    ipcMain.emit('tally:ready', trusted);
    expect(readies()).toBe(1);
  });
});

function recording(key: string, state: RecordingView['state'], bytes: number | null = null): RecordingView {
  return {
    key,
    channelId: key,
    source: 'server',
    state,
    receivedAt: '2024-01-01T00:00:00Z',
    deadline: null,
    bytes,
    totalBytes: 100,
    rate: null,
    etaSeconds: null,
    fileName: null,
    error: null,
    attempts: 0,
  };
}

describe('EventPusher', () => {
  it('holds events until the page is ready, keeping the latest state per event and per recording', () => {
    const contents = new FakeWebContents();
    const pusher = new EventPusher();
    pusher.attach(contents);
    const live1: ChannelView[] = [];
    const live2: ChannelView[] = [];
    pusher.send('channels:live', live1);
    pusher.send('recordings:progress', recording('a', 'downloading', 10));
    pusher.send('recordings:progress', recording('b', 'downloading', 5));
    pusher.send('recordings:progress', recording('a', 'downloading', 50));
    pusher.send('app:error', { code: 'network', message: 'one' });
    pusher.send('app:error', { code: 'network', message: 'two' });
    pusher.send('channels:live', live2);
    expect(contents.sent).toEqual([]);
    expect(pusher.pending).toBe(5);

    pusher.markReady();
    expect(contents.sent.map((s) => s.channel)).toEqual([
      'tally:event:recordings:progress',
      'tally:event:recordings:progress',
      'tally:event:app:error',
      'tally:event:app:error',
      'tally:event:channels:live',
    ]);
    expect((contents.sent[0]!.args[0] as RecordingView).key).toBe('b');
    expect((contents.sent[1]!.args[0] as RecordingView).bytes).toBe(50);
    expect(contents.sent[4]!.args[0]).toBe(live2);

    pusher.send('tunnel:status', tunnelStatus());
    expect(contents.sent).toHaveLength(6);
  });

  it('holds again while the page reloads, and never sends to a destroyed webContents', () => {
    const contents = new FakeWebContents();
    const pusher = new EventPusher();
    pusher.attach(contents);
    pusher.markReady();
    pusher.reset();
    pusher.send('app:error', { code: 'x', message: 'held' });
    expect(contents.sent).toEqual([]);
    contents.destroyed = true;
    pusher.markReady();
    pusher.send('app:error', { code: 'x', message: 'also held' });
    expect(contents.sent).toEqual([]);
    expect(pusher.pending).toBe(2);
  });

  it('bounds the queue, dropping the oldest', () => {
    const contents = new FakeWebContents();
    const pusher = new EventPusher({ limit: 3 });
    pusher.attach(contents);
    for (let i = 0; i < 5; i++) pusher.send('app:error', { code: 'x', message: String(i) });
    pusher.markReady();
    expect(contents.sent.map((s) => (s.args[0] as { message: string }).message)).toEqual(['2', '3', '4']);
  });
});
