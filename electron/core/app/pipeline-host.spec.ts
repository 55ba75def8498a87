/**
 * The pipeline host owns its tunnel view and its health's facts (issue 35): the app core pushes its phase, demo
 * sandbox and health facts (demo, keychain, studio link, paused) down, the settings store is read directly, and no
 * dependency of the host answers anything (each only hears a push up), so the host never climbs back into the app
 * core to read what it was just told. The same holds for the studio host: the rows removed from the Recordings
 * list (the pipeline host's) are pushed down to it, and none of its links answers anything.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { note, type HealthView, type RecordingView, type StudioView, type TunnelStatus } from '../../contract.js';
import { MemorySecretStore } from '../credentials.js';
import { ConfigError } from '../errors.js';
import { openSettingsStore } from '../settings.js';
import { startNatsServer } from '../../../tests/support/nats-server.js';
import { announceRecording } from '../../../tests/support/studio-announce.js';
import type { HiddenKeys } from './hidden-recordings.js';
import { PipelineHost, type PipelineHostDeps } from './pipeline-host.js';
import { StudioHost, type StudioCoreLinks } from './studio-host.js';

const homes: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
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
    // The cause alone after the receiver's own words (not "Recordings are not being received", nor a retry time).
    host.failed(new ConfigError('The state folder is read-only.'), () => undefined);
    expect(component(host.health(), 'receiver')).toMatchObject({ state: 'error' });
    expect(component(host.health(), 'receiver')?.reason).toBe(
      'The webhook receiver is not running: The state folder is read-only.',
    );
    host.clearError();
    expect(component(host.health(), 'receiver')?.reason).not.toMatch(/not running/);
    // An error that is not Tally's names its cause too (its message, not just "Error"), with secrets blanked.
    host.failed(new Error('connect ECONNREFUSED https://user:hunter2@127.0.0.1:9'), () => undefined);
    expect(component(host.health(), 'receiver')?.reason).toBe(
      'The webhook receiver is not running: connect ECONNREFUSED https://[redacted]@127.0.0.1:9',
    );
    host.clearError();
    await host.shutdown();
  });

  it('has no dependency that answers anything (each is a push up), and no facts to ask for', () => {
    type Answers = {
      [K in keyof PipelineHostDeps]-?: NonNullable<PipelineHostDeps[K]> extends (...a: never[]) => infer R ? R : void;
    };
    expectTypeOf<Answers[keyof Answers]>().toEqualTypeOf<void>();
    expectTypeOf<PipelineHostDeps>().not.toHaveProperty('facts');
  });

  it('pushes the rows removed from the list down as it is made', async () => {
    const home = await mkdtemp(join(tmpdir(), 'tally-host-'));
    homes.push(home);
    // Removed in an earlier run: kept in the state folder.
    await writeFile(join(home, 'hidden-recordings.json'), JSON.stringify({ keys: ['studio:rec-old'] }));
    const pushed: HiddenKeys[] = [];
    const host = new PipelineHost({
      emit: () => undefined,
      log: () => undefined,
      updateTray: () => undefined,
      settings: openSettingsStore(home),
      home,
      face: 'app',
      onHealth: () => undefined,
      hiddenChanged: (keys) => pushed.push(keys),
    });
    expect(pushed).toHaveLength(1);
    expect(pushed[0]!.has('studio:rec-old')).toBe(true);
    expect(pushed[0]!.has('studio:rec-new')).toBe(false);
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

describe('StudioHost', () => {
  it('pushes its studio link down and is handed the publisher link and the removed rows: none of its links answers', () => {
    type Answers = {
      [K in keyof StudioCoreLinks]-?: NonNullable<StudioCoreLinks[K]> extends (...a: never[]) => infer R ? R : void;
    };
    expectTypeOf<Answers[keyof Answers]>().toEqualTypeOf<void | Promise<void>>();
    expectTypeOf<StudioCoreLinks>().not.toHaveProperty('isHidden');
    expectTypeOf<StudioCoreLinks>().not.toHaveProperty('publisherLink');
    expectTypeOf<StudioCoreLinks>().not.toHaveProperty('statusChanged');
  });

  it('as a member, leaves out the rows pushed to it as removed and never asks the app core about them', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.close());
    const home = await mkdtemp(join(tmpdir(), 'tally-studio-host-'));
    homes.push(home);
    const source = join(home, 'source.bin');
    await writeFile(source, Buffer.alloc(30_000, 4));
    const back = (name: string) => () => {
      throw new Error(`the studio host called back into the app core (${name})`);
    };
    const rows: RecordingView[] = [];
    let viewed: (view: StudioView) => void = () => undefined;
    const studio = new StudioHost({ secrets: new MemorySecretStore(), home }, {}, openSettingsStore(home), {
      emit: (view) => viewed(view),
      save: back('save'),
      error: back('error'),
      publish: back('publish'),
      assertStorable: back('assertStorable'),
      recordingChanged: (row) => rows.push(row),
      linkChanged: () => undefined,
      memberChanged: () => undefined,
    });
    cleanups.push(() => studio.stop());
    // What the pipeline host pushes down: the rows the producer removed (here one, before it is even mirrored).
    const removed = new Set(['studio:rec-removed-cam']);
    studio.setHidden({ has: (key) => removed.has(key) });
    const bothSaved = new Promise<void>((resolve) => {
      viewed = (view) => {
        const saved = view.recordings.filter((r) => r.state === 'saved').map((r) => r.channelId);
        if (saved.includes('removed-cam') && saved.includes('kept-cam')) resolve();
      };
    });
    const spec = { mode: 'follow', servers: [nats.url], replicas: null, store: 'nats', retentionMs: 86_400_000 };
    await studio.reconcile({ ...spec, mode: 'follow', name: 'host-member' }, null, join(home, 'recordings'));
    await announceRecording(nats.url, source, 'removed-cam');
    await announceRecording(nats.url, source, 'kept-cam');
    await bothSaved;
    // Both are mirrored; only the one not removed is pushed up as a row of the Recordings list.
    expect(
      studio
        .memberRecordings()
        .map((r) => r.channelId)
        .sort(),
    ).toEqual(['kept-cam', 'removed-cam']);
    expect(rows.some((r) => r.channelId === 'kept-cam' && r.state === 'saved')).toBe(true);
    expect(rows.filter((r) => r.channelId === 'removed-cam')).toEqual([]);
  });
});
