/**
 * The pipeline host owns its tunnel view (issue 35): the app core pushes its phase and demo sandbox down, the
 * settings store is read directly, and nothing in the host's dependencies hands a view back, so the host never
 * climbs back into the app core to show what it was just told.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { TunnelStatus } from '../../contract.js';
import { openSettingsStore } from '../settings.js';
import { PipelineHost, type PipelineHostDeps } from './pipeline-host.js';

const homes: string[] = [];
afterEach(async () => {
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
});

/** Every way back into the app core fails loudly: the view must come from the host's own state. */
function hostOver(home: string): PipelineHost {
  const back = (name: string) => () => {
    throw new Error(`the host called back into the app core (${name})`);
  };
  return new PipelineHost({
    emit: () => undefined,
    log: () => undefined,
    updateTray: back('updateTray'),
    settings: openSettingsStore(home),
    home,
    face: 'app',
    facts: back('facts'),
    onHealth: back('onHealth'),
    onPublisher: back('onPublisher'),
    onChannel: back('onChannel'),
  });
}

describe('PipelineHost', () => {
  it('makes its tunnel view from its own state, the settings and what the core pushed', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-host-'));
    homes.push(home);
    const host = hostOver(home);
    host.setPhase('running');
    host.setDemo(null);
    expect(host.view()).toMatchObject({ provider: 'none', publicUrl: null, registered: false });
    // A settings change reaches the view without anyone telling the host.
    openSettingsStore(home).update({ tunnel: { provider: 'url', publicUrl: 'https://hooks.example.com' } });
    expect(host.view().provider).toBe('url');
    await host.shutdown();
  });

  it('has no dependency that returns a view', () => {
    type Returns = {
      [K in keyof PipelineHostDeps]: PipelineHostDeps[K] extends (...a: never[]) => infer R ? R : never;
    };
    expectTypeOf<Returns[keyof Returns]>().not.toEqualTypeOf<TunnelStatus>();
    expectTypeOf<PipelineHostDeps>().not.toHaveProperty('tunnelView');
  });
});
