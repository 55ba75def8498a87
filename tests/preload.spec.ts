/**
 * The preload as the page sees it. The Electron runtime cannot run here, so `electron` is replaced by a
 * small fake (`fakeElectron`) that records what the preload exposes and sends; everything else is the
 * real preload and the real contract.
 */
import type { IpcRendererEvent } from 'electron';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { EVENT_NAMES, REQUEST_NAMES, errorCodeOf, errorMessageOf } from '../electron/contract.js';
import type { ChannelView, TallyBridge } from '../electron/contract.js';
import type * as PreloadModule from '../electron/preload/index.js';

type Listener = (event: IpcRendererEvent, ...args: unknown[]) => void;

/** Records the preload's use of contextBridge and ipcRenderer; `emit` plays main sending an event. */
const fakeElectron = vi.hoisted(() => {
  const exposed = new Map<string, unknown>();
  const listeners = new Map<string, Set<Listener>>();
  const invokes: { channel: string; args: unknown[] }[] = [];
  const sent: string[] = [];
  let reply: (channel: string, args: unknown[]) => Promise<unknown> = async () => ({ ok: true, result: null });
  const fakeEvent = {
    sender: { secret: 'the IpcRendererEvent must not reach the page' },
    ports: [],
  } as unknown as IpcRendererEvent;
  return {
    exposed,
    listeners,
    invokes,
    sent,
    fakeEvent,
    setReply(fn: typeof reply) {
      reply = fn;
    },
    emit(channel: string, payload: unknown) {
      for (const listener of [...(listeners.get(channel) ?? [])]) listener(fakeEvent, payload);
    },
    reset() {
      exposed.clear();
      listeners.clear();
      invokes.length = 0;
      sent.length = 0;
      reply = async () => ({ ok: true, result: null });
    },
    module: {
      contextBridge: {
        exposeInMainWorld(key: string, api: unknown) {
          exposed.set(key, api);
        },
      },
      ipcRenderer: {
        invoke(channel: string, ...args: unknown[]) {
          invokes.push({ channel, args });
          return reply(channel, args);
        },
        send(channel: string) {
          sent.push(channel);
        },
        on(channel: string, listener: Listener) {
          let set = listeners.get(channel);
          if (!set) listeners.set(channel, (set = new Set()));
          set.add(listener);
        },
        removeListener(channel: string, listener: Listener) {
          listeners.get(channel)?.delete(listener);
        },
      },
    },
  };
});

vi.mock('electron', () => fakeElectron.module);

/** A fresh preload per test (module state such as "ready sent" is per page load). */
async function loadPreload(): Promise<{
  tally: TallyBridge;
  preload: typeof PreloadModule;
  RemoteError: new (code: string, message: string) => Error;
}> {
  fakeElectron.reset();
  vi.resetModules();
  const preload = await import('../electron/preload/index.js');
  const { RemoteError } = await import('../electron/contract.js');
  return { tally: fakeElectron.exposed.get('tally') as TallyBridge, preload, RemoteError };
}

const flushMicrotasks = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe('preload', () => {
  let tally: TallyBridge;
  let preload: typeof PreloadModule;
  let RemoteError: new (code: string, message: string) => Error;
  beforeEach(async () => {
    ({ tally, preload, RemoteError } = await loadPreload());
  });

  it('exposes only window.tally', () => {
    expect([...fakeElectron.exposed.keys()]).toEqual(['tally']);
  });

  it('exposes exactly the contract methods as area.verb, plus on', () => {
    const expected = new Map<string, string[]>();
    for (const name of REQUEST_NAMES) {
      const [area, verb] = name.split(':') as [string, string];
      expected.set(area, [...(expected.get(area) ?? []), verb]);
    }
    const bridge = tally as unknown as Record<string, unknown>;
    expect(Object.keys(bridge).sort()).toEqual([...expected.keys(), 'on'].sort());
    expect(typeof bridge.on).toBe('function');
    for (const [area, verbs] of expected) {
      const methods = bridge[area] as Record<string, unknown>;
      expect(Object.keys(methods).sort(), area).toEqual([...verbs].sort());
      for (const verb of verbs) expect(typeof methods[verb], `${area}.${verb}`).toBe('function');
    }
    expect(bridge).not.toHaveProperty('invoke');
    expect(bridge).not.toHaveProperty('ipcRenderer');
  });

  it('invokes on the prefixed channel with the arguments and resolves the reply value', async () => {
    fakeElectron.setReply(async () => ({ ok: true, result: { ended: true } }));
    await expect(tally.channels.end('ch-1')).resolves.toEqual({ ended: true });
    const query = { since: '2024-01-01T00:00:00Z', until: '2024-01-02T00:00:00Z', keyword: 'x' };
    await tally.channels.search(query);
    await tally.app.info();
    expect(fakeElectron.invokes).toEqual([
      { channel: 'tally:channels:end', args: ['ch-1'] },
      { channel: 'tally:channels:search', args: [query] },
      { channel: 'tally:app:info', args: [] },
    ]);
  });

  it('rebuilds error envelopes as RemoteError with the code and message', async () => {
    fakeElectron.setReply(async () => ({ ok: false, error: { code: 'unknown_channel', message: 'No such channel.' } }));
    const transport = preload.createIpcTransport(fakeElectron.module.ipcRenderer);
    const error = await transport.invoke('channels:end', ['nope']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ code: 'unknown_channel' });
    expect(errorMessageOf((error as Error).message)).toBe('No such channel.');
  });

  it('hands the page rejections as Errors whose message survives the bridge copy', async () => {
    fakeElectron.setReply(async () => ({ ok: false, error: { code: 'unknown_channel', message: 'No such channel.' } }));
    const error = await tally.channels.end('nope').catch((e: unknown) => e);
    // contextBridge keeps an Error's message only; structuredClone is the closest stand-in here.
    const copied = structuredClone(error);
    expect(copied).toBeInstanceOf(Error);
    expect((copied as { code?: string }).code).toBeUndefined();
    // The code still reaches the page, inside the message, and the page reads both back.
    expect(errorCodeOf(copied)).toBe('unknown_channel');
    expect(errorMessageOf((copied as Error).message)).toBe('No such channel.');
  });

  it('turns a failed invoke or a malformed reply into a RemoteError without Electron internals', async () => {
    fakeElectron.setReply(async () => {
      throw new Error("Error invoking remote method 'tally:app:info': Error: No handler registered");
    });
    const transport = preload.createIpcTransport(fakeElectron.module.ipcRenderer);
    const failed = await transport.invoke('app:info', []).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(RemoteError);
    expect(failed).toMatchObject({ code: 'ipc_failed' });
    expect((failed as Error).message).not.toContain('invoking remote method');
    await expect(tally.app.info()).rejects.toMatchObject({ code: 'ipc_failed' });

    fakeElectron.setReply(async () => ({ ok: false, error: 'text' }));
    await expect(tally.app.info()).rejects.toMatchObject({ code: 'internal' });
    fakeElectron.setReply(async () => 'just a string');
    await expect(tally.app.info()).rejects.toMatchObject({ code: 'internal' });
  });

  it('delivers event payloads without the IpcRendererEvent, and unsubscribe removes the listener', () => {
    const seen: unknown[][] = [];
    const off = tally.on('channels:live', (...args: unknown[]) => seen.push(args));
    const live: ChannelView[] = [];
    fakeElectron.emit('tally:event:channels:live', live);
    expect(seen).toEqual([[live]]);
    expect(seen.flat()).not.toContain(fakeElectron.fakeEvent);

    off();
    off(); // twice is harmless
    fakeElectron.emit('tally:event:channels:live', live);
    expect(seen).toHaveLength(1);
    expect(fakeElectron.listeners.get('tally:event:channels:live')?.size).toBe(0);
  });

  it('subscribes each contract event on its own prefixed channel and refuses unknown events', () => {
    for (const event of EVENT_NAMES) {
      const got: unknown[] = [];
      const off = tally.on(event, (payload) => got.push(payload));
      fakeElectron.emit(`tally:event:${event}`, { event });
      expect(got, event).toEqual([{ event }]);
      off();
    }
    expect(() => tally.on('nope' as never, () => {})).toThrow(/Unknown event/);
  });

  it('signals ready once, after the first subscriptions of a tick', async () => {
    expect(fakeElectron.sent).toEqual([]);
    tally.on('recordings:changed', () => {});
    tally.on('tunnel:status', () => {});
    expect(fakeElectron.sent).toEqual([]);
    await flushMicrotasks();
    expect(fakeElectron.sent).toEqual(['tally:ready']);
    tally.on('app:error', () => {});
    await flushMicrotasks();
    expect(fakeElectron.sent).toEqual(['tally:ready']);
  });
});
