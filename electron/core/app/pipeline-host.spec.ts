/**
 * The pipeline host owns its tunnel view and its health's facts (issue 35): the app core pushes its phase, demo
 * sandbox and health facts (demo, keychain, studio link, paused) down, the settings store is read directly, and no
 * dependency of the host answers anything (each only hears a push up), so the host never climbs back into the app
 * core to read what it was just told.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { note, type HealthView, type TunnelStatus } from '../../contract.js';
import { openSettingsStore } from '../settings.js';
import { PipelineHost, type PipelineHostDeps } from './pipeline-host.js';
import type { StudioCoreLinks } from './studio-host.js';

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

  it('judges its health from the facts pushed to it, and only pushes the result up', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-host-'));
    homes.push(home);
    let heardHealth: (view: HealthView) => void = () => undefined;
    const heard = new Set<string>();
    const host = new PipelineHost({
      emit: () => undefined,
      log: () => undefined,
      updateTray: () => heard.add('updateTray'),
      settings: openSettingsStore(home),
      home,
      face: 'app',
      onHealth: (view) => heardHealth(view),
    });
    const component = (view: HealthView, id: string) => view.components.find((c) => c.id === id);
    // Nothing pushed yet: no keychain, no studio in the health.
    expect(component(host.health(), 'keychain')).toBeUndefined();
    expect(component(host.health(), 'studio')).toBeUndefined();

    host.setFacts({ keychain: { available: false, reason: [note('keychainUnusable')] } });
    host.setFacts({ studio: { state: 'unreachable', reason: [note('teamConnectionLost')] } });
    // Judged again on its own (no one calls it): the pushed facts reach the core as a health push.
    const announced = await new Promise<HealthView>((resolve) => {
      heardHealth = (view) => {
        if (component(view, 'studio')) resolve(view);
      };
    });
    expect(component(announced, 'keychain')).toMatchObject({ state: 'warning' });
    expect(component(announced, 'studio')).toMatchObject({ state: 'warning' });
    expect(component(announced, 'studio')?.reason).toMatch(/connection to the team server was lost/);
    expect(heard).toEqual(new Set(['updateTray']));

    // Studio mode off and the keychain not needed: pushed as null, gone from the health.
    host.setFacts({ studio: null, keychain: null });
    expect(component(host.health(), 'studio')).toBeUndefined();
    expect(component(host.health(), 'keychain')).toBeUndefined();

    // Why nothing receives comes from the host's own failed reconcile, not from the core.
    host.failed(new Error('the state folder is read-only'), () => undefined);
    expect(component(host.health(), 'receiver')).toMatchObject({ state: 'error' });
    expect(component(host.health(), 'receiver')?.reason).toMatch(/Recordings are not being received/);
    host.clearError();
    expect(component(host.health(), 'receiver')?.reason).not.toMatch(/not being received/);
    await host.shutdown();
  });

  it('has no dependency that answers anything (each is a push up), and no facts to ask for', () => {
    type Answers = {
      [K in keyof PipelineHostDeps]-?: NonNullable<PipelineHostDeps[K]> extends (...a: never[]) => infer R ? R : void;
    };
    expectTypeOf<Answers[keyof Answers]>().toEqualTypeOf<void>();
    expectTypeOf<PipelineHostDeps>().not.toHaveProperty('facts');
  });

  it('has no dependency that returns a view', () => {
    type Returns = {
      [K in keyof PipelineHostDeps]: PipelineHostDeps[K] extends (...a: never[]) => infer R ? R : never;
    };
    expectTypeOf<Returns[keyof Returns]>().not.toEqualTypeOf<TunnelStatus>();
    expectTypeOf<PipelineHostDeps>().not.toHaveProperty('tunnelView');
  });
});

describe('StudioHost', () => {
  it('pushes its studio link down and is handed the publisher link: none of its links reads the receiver back', () => {
    // isHidden asks about the Recordings list's removed rows (owned by the pipeline host), not about anything the
    // studio host said: the one question left (a member's acknowledged missed recordings).
    type Pushes = Omit<StudioCoreLinks, 'isHidden'>;
    type Answers = {
      [K in keyof Pushes]-?: NonNullable<Pushes[K]> extends (...a: never[]) => infer R ? R : void;
    };
    expectTypeOf<Answers[keyof Answers]>().toEqualTypeOf<void | Promise<void>>();
    expectTypeOf<StudioCoreLinks>().not.toHaveProperty('publisherLink');
    expectTypeOf<StudioCoreLinks>().not.toHaveProperty('statusChanged');
  });
});
