import { describe, expect, it, onTestFinished } from 'vitest';
import { TestBridge, deferred, healthView } from '../../testing/bridge.js';
import type { HealthView } from '../../../electron/contract.js';
import { HealthStore } from './health.svelte.js';

describe('HealthStore', () => {
  it('loads the health, follows health:changed, and never lets a slow load overwrite a newer push', async () => {
    const bridge = new TestBridge();
    const answer = deferred<HealthView>();
    bridge.handle('health:get', () => answer.promise);
    const store = new HealthStore(bridge.bridge);
    onTestFinished(store.start());
    expect(store.view).toBeNull();

    bridge.emit('health:changed', healthView({ state: 'error', summary: 'Port 8787 is in use.' }));
    expect(store.view?.state).toBe('error');
    answer.resolve(healthView());
    await answer.promise;
    await Promise.resolve();
    expect(store.view?.summary).toBe('Port 8787 is in use.');
    expect(store.component('receiver')?.state).toBe('ok');
    expect(store.component('studio')).toBeUndefined();
  });

  it('names the address to forward to: the configured port, or the one listened on when the OS chose it', () => {
    const store = new HealthStore(new TestBridge().bridge);
    expect(store.forwardTo).toBeNull();
    const receiver = (r: Partial<HealthView['receiver']>) =>
      healthView({ receiver: { ...healthView().receiver, ...r } });
    store.view = receiver({ port: null, configuredPort: 8787 });
    expect(store.forwardTo).toBe('127.0.0.1:8787');
    store.view = receiver({ port: 41234, configuredPort: 0 });
    expect(store.forwardTo).toBe('127.0.0.1:41234');
    store.view = receiver({ host: '0.0.0.0', port: 8787, configuredPort: 8787 });
    expect(store.forwardTo).toBe('127.0.0.1:8787');
    store.view = receiver({ host: '::1', port: 8787, configuredPort: 8787 });
    expect(store.forwardTo).toBe('[::1]:8787');
    store.view = receiver({ port: null, configuredPort: 0 });
    expect(store.forwardTo).toBeNull();
  });
});
