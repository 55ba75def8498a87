import { describe, expect, it } from 'vitest';
import { ManualClock, TestBridge, channel } from '../../testing/bridge.js';
import { LiveStore } from './live.svelte.js';

describe('LiveStore', () => {
  it('keeps the previous list when a poll changes nothing, and extends the history either way', () => {
    const store = new LiveStore(new TestBridge({}).bridge, new ManualClock('2024-05-14T12:00:00.000Z'));
    store.apply([channel({ id: 'a', watchers: 1 }), channel({ id: 'b', watchers: 2 })]);
    const first = store.channels;

    store.apply([channel({ id: 'a', watchers: 1 }), channel({ id: 'b', watchers: 2 })]);
    expect(store.channels).toBe(first);
    expect(store.historyOf('a')).toEqual([1, 1]);

    store.apply([channel({ id: 'a', watchers: 4 }), channel({ id: 'b', watchers: 2 })]);
    expect(store.channels).not.toBe(first);
    expect(store.channels[0]?.watchers).toBe(4);
    expect(store.historyOf('a')).toEqual([1, 1, 4]);
  });
});
