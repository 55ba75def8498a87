import type { MenuItemConstructorOptions, MessageBoxOptions, Rectangle } from 'electron';
import { describe, expect, it } from 'vitest';
import type { TraySnapshot } from '../core/app/types.js';
import { ChannelNotEndedError } from '../core/errors.js';
import { fakeImage, fakeMenuBuilder, FakeTray } from '../../tests/fakes/electron.js';
import { traySnapshot } from '../../tests/support/app/tray-snapshot.js';
import { cleanText, MAX_MENU_CHANNELS, SystemTrayService, trayIconState, trayTitle, trayTooltip } from './tray.js';

const ALL_WELL = 'All is well: webhooks reach Tally and recordings are saved.';
const PORT_HELD = 'Port 8787 is in use by another program: webhooks cannot reach Tally.';

function snapshot(patch: Partial<TraySnapshot> = {}): TraySnapshot {
  return traySnapshot({ health: { state: 'ok', summary: ALL_WELL }, ...patch });
}

const live = (...ids: string[]) => ({ liveCount: ids.length, liveChannels: ids.map((id) => ({ id, watchers: 1 })) });

function setup(platform: NodeJS.Platform = 'linux') {
  const trays: FakeTray[] = [];
  const menus = fakeMenuBuilder();
  const boxes: MessageBoxOptions[] = [];
  const answers: number[] = [];
  const ended: string[] = [];
  const updates: unknown[] = [];
  const popover: string[] = [];
  const opened: string[] = [];
  let quits = 0;
  const behaviour = { endError: null as Error | null, updateError: null as Error | null };
  // Resolves when the n-th dialog / settings update happens (menu clicks are fire-and-forget).
  const waiters: { ready: () => boolean; resolve: () => void }[] = [];
  const settle = () => {
    for (const w of [...waiters]) {
      if (!w.ready()) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const until = (ready: () => boolean) =>
    new Promise<void>((resolve) => {
      waiters.push({ ready, resolve });
      settle();
    });
  const tray = new SystemTrayService({
    platform,
    createTray: (image) => {
      const t = new FakeTray(image);
      trays.push(t);
      return t.asElectron();
    },
    loadIcon: (state) => fakeImage(state),
    buildMenu: menus.build,
    showMessageBox: async (options) => {
      boxes.push(options);
      settle();
      return { response: answers.shift() ?? 1, checkboxChecked: false };
    },
    handlers: {
      'channels:end': async (id) => {
        if (behaviour.endError) throw behaviour.endError;
        ended.push(id);
        return { ended: true };
      },
      'settings:update': async (patch) => {
        updates.push(patch);
        settle();
        if (behaviour.updateError) throw behaviour.updateError;
        return {} as never;
      },
    },
    popover: {
      toggle: (bounds?: Rectangle | null) => popover.push(`toggle ${JSON.stringify(bounds)}`),
      show: () => popover.push('show'),
      showSection: (section) => popover.push(`section ${section}`),
    },
    openFolder: (path) => opened.push(path),
    quit: () => quits++,
    log: () => {},
  });
  const fake = () => trays[0]!;
  const items = (): MenuItemConstructorOptions[] => menus.built.at(-1)!.template;
  const item = (label: string) => {
    const found = items().find((i) => i.label === label);
    if (!found)
      throw new Error(
        `no menu item "${label}" in ${items()
          .map((i) => i.label)
          .join(', ')}`,
      );
    return found;
  };
  const click = (label: string) => (item(label).click as () => void)();
  return {
    tray,
    trays,
    fake,
    menus,
    boxes,
    answers,
    ended,
    updates,
    popover,
    opened,
    quits: () => quits,
    behaviour,
    items,
    item,
    click,
    until,
  };
}

describe('tray summary', () => {
  it('icon: the health first (error, then warning or attention), then downloading beats live beats idle', () => {
    expect(trayIconState(snapshot())).toBe('idle');
    expect(trayIconState(snapshot(live('a')))).toBe('live');
    expect(trayIconState(snapshot({ ...live('a'), downloading: 1 }))).toBe('downloading');
    expect(trayIconState(snapshot({ ...live('a'), downloading: 1, attention: 'Webhook unreachable' }))).toBe('warning');
    expect(trayIconState(snapshot({ ...live('a'), downloading: 1, health: { state: 'warning', summary: 'w' } }))).toBe(
      'warning',
    );
    expect(
      trayIconState(snapshot({ ...live('a'), attention: 'x', health: { state: 'error', summary: PORT_HELD } })),
    ).toBe('error');
  });

  it('tooltip and macOS title', () => {
    expect(trayTooltip(snapshot())).toBe(`Tally: ${ALL_WELL}`);
    expect(trayTooltip(snapshot(live('a', 'b', 'c')))).toBe(`Tally: 3 live · ${ALL_WELL}`);
    expect(trayTooltip(snapshot({ ...live('a'), downloading: 2, progress: 0.456 }))).toBe(
      `Tally: 1 live · downloading 2 (45%) · ${ALL_WELL}`,
    );
    expect(trayTooltip(snapshot({ downloading: 1, progress: null, receivingPaused: true }))).toBe(
      `Tally: downloading 1 · downloads paused · ${ALL_WELL}`,
    );
    expect(trayTooltip(snapshot({ attention: 'x'.repeat(500) })).length).toBeLessThanOrEqual(127);
    // Something wrong: the health's line comes first, whole, before what Tally is doing.
    expect(trayTooltip(snapshot({ ...live('a'), health: { state: 'error', summary: PORT_HELD } }))).toBe(
      `Tally: ${PORT_HELD} · 1 live`,
    );
    expect(
      trayTooltip(snapshot({ health: { state: 'error', summary: 'y'.repeat(300) }, attention: 'z'.repeat(300) }))
        .length,
    ).toBeLessThanOrEqual(127);
    // The reason to look is said in the producer's language from its note (the English line is the fallback).
    const failed = { attention: '2 recordings failed', attentionNotes: [{ code: 'attnFailed', params: { count: 2 } }] };
    expect(trayTooltip(snapshot(failed), 'ko')).toContain('녹화 2개 실패');
    expect(trayTooltip(snapshot(failed), 'en')).toContain('2 recordings failed');
    expect(trayTitle(snapshot({ downloading: 1, progress: 0.999 }))).toBe('99%');
    expect(trayTitle(snapshot({ downloading: 1, progress: null }))).toBe('');
    expect(trayTitle(snapshot({ downloading: 0, progress: 0.5 }))).toBe('');
  });

  it('cleans hostile channel IDs: no control or bidi characters, shortened', () => {
    expect(cleanText('a\nb\u202Ec\u0000d', 40)).toBe('abcd');
    expect(cleanText('x'.repeat(100), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});

describe('SystemTrayService', () => {
  it('creates the tray on the first snapshot and renders icon, tooltip and menu', () => {
    const { tray, trays, fake, items } = setup('linux');
    tray.render();
    expect(trays).toHaveLength(0);
    tray.setSnapshot(snapshot());
    expect(trays).toHaveLength(1);
    expect(fake().images).toEqual([fakeImage('idle')]);
    expect(fake().tooltips).toEqual([`Tally: ${ALL_WELL}`]);
    expect(items().map((i) => i.label ?? i.type)).toEqual([
      'Open Tally',
      'separator',
      'Open recordings folder',
      'Pause downloads',
      'Settings…',
      'separator',
      'Quit Tally',
    ]);
    // Linux: the menu is attached, since AppIndicator may not deliver clicks.
    expect(fake().contextMenus).toHaveLength(1);
  });

  it('updates only what changed, and rebuilds the menu only when its content changes', () => {
    const { tray, fake, menus } = setup('darwin');
    tray.setSnapshot(snapshot(live('a')));
    tray.setSnapshot(snapshot(live('a')));
    expect(fake().images).toHaveLength(1);
    expect(fake().tooltips).toHaveLength(1);
    expect(menus.built).toHaveLength(1);

    tray.setSnapshot(snapshot({ ...live('a'), downloading: 1, progress: 0.2 }));
    tray.setSnapshot(snapshot({ ...live('a'), downloading: 1, progress: 0.5 }));
    expect(fake().images.map((i) => (i as unknown as { fakeName: string }).fakeName)).toEqual(['live', 'downloading']);
    expect(fake().tooltips.at(-1)).toBe(`Tally: 1 live · downloading 1 (50%) · ${ALL_WELL}`);
    expect(fake().titles).toEqual(['', '20%', '50%']);
    expect(menus.built).toHaveLength(1);

    tray.setSnapshot(snapshot({ ...live('a', 'b'), downloading: 1, progress: 0.5 }));
    expect(menus.built).toHaveLength(2);
  });

  it('macOS/Windows: left click toggles the popover at the click bounds, right click pops the menu up', () => {
    const { tray, fake, popover, menus } = setup('win32');
    tray.setSnapshot(snapshot());
    const bounds = { x: 10, y: 20, width: 16, height: 16 };
    fake().emit('click', {}, bounds);
    expect(popover).toEqual([`toggle ${JSON.stringify(bounds)}`]);
    expect(fake().contextMenus).toEqual([]);
    fake().emit('right-click');
    expect(fake().poppedUp).toEqual([menus.built[0]]);
  });

  it('lists live channels with End items, cleaned and escaped, and caps the list', () => {
    const { tray, items } = setup();
    const ids = Array.from({ length: MAX_MENU_CHANNELS + 3 }, (_, i) => `ch-${i}`);
    ids[0] = 'Tom & Jerry\n\u202Eshow';
    tray.setSnapshot(snapshot(live(...ids)));
    const labels = items().map((i) => i.label);
    expect(labels).toContain(`${ids.length} live`);
    expect(labels).toContain('End Tom && Jerryshow…');
    expect(labels.filter((l) => l?.startsWith('End '))).toHaveLength(MAX_MENU_CHANNELS);
    expect(labels).toContain('3 more in Tally…');
    expect(items().find((i) => i.label === `${ids.length} live`)?.enabled).toBe(false);
  });

  it('ends a channel only after the confirmation names it and is accepted', async () => {
    const { tray, boxes, answers, ended } = setup();
    tray.setSnapshot(snapshot(live('1581324488053_Dc5aQ')));
    answers.push(1);
    await expect(tray.endChannel('1581324488053_Dc5aQ')).resolves.toBe(false);
    expect(ended).toEqual([]);
    expect(boxes[0]?.message).toContain('1581324488053_Dc5aQ');
    expect(boxes[0]?.cancelId).toBe(1);
    expect(boxes[0]?.defaultId).toBe(1);

    answers.push(0);
    await expect(tray.endChannel('1581324488053_Dc5aQ')).resolves.toBe(true);
    expect(ended).toEqual(['1581324488053_Dc5aQ']);
  });

  it('the End menu item asks first; a refusal from the service is shown, not thrown', async () => {
    const { tray, click, boxes, answers, ended, behaviour, until } = setup();
    tray.setSnapshot(snapshot(live('ch-1')));
    behaviour.endError = new ChannelNotEndedError('ch-1');
    answers.push(0);
    click('End ch-1…');
    await until(() => boxes.length === 2);
    expect(ended).toEqual([]);
    expect(boxes[1]).toMatchObject({ type: 'error', detail: new ChannelNotEndedError('ch-1').message });
  });

  it('menu actions: open, folder, pause receiving, settings, quit', async () => {
    const { tray, click, popover, opened, updates, quits, item, until } = setup();
    tray.setSnapshot(snapshot({ receivingPaused: false }));
    click('Open Tally');
    click('Open recordings folder');
    click('Settings…');
    click('Quit Tally');
    expect(popover).toEqual(['show', 'section settings']);
    expect(opened).toEqual(['/home/me/Videos/Tally']);
    expect(quits()).toBe(1);

    expect(item('Pause downloads')).toMatchObject({ type: 'checkbox', checked: false });
    click('Pause downloads');
    await until(() => updates.length === 1);
    expect(updates).toEqual([{ receivingPaused: true }]);
    tray.setSnapshot(snapshot({ receivingPaused: true }));
    expect(item('Pause downloads').checked).toBe(true);
  });

  it('a failed pause rebuilds the menu from the unchanged state and explains', async () => {
    const { tray, click, menus, boxes, behaviour, until } = setup();
    tray.setSnapshot(snapshot());
    behaviour.updateError = new Error('disk full');
    click('Pause downloads');
    await until(() => boxes.length === 1);
    expect(menus.built).toHaveLength(2);
    expect(menus.built[1]!.template.find((i) => i.label === 'Pause downloads')?.checked).toBe(false);
    expect(boxes[0]).toMatchObject({ type: 'error', message: 'Could not pause receiving' });
    expect(boxes[0]?.detail).not.toContain('disk full');
  });

  it('shows the health in three icons and the tooltip, and names what is wrong in the menu', () => {
    const { tray, fake, items, click, popover } = setup('linux');
    tray.setSnapshot(snapshot(live('a')));
    tray.setSnapshot(snapshot({ ...live('a'), health: { state: 'warning', summary: 'Only 2 GB free in /rec.' } }));
    tray.setSnapshot(snapshot({ ...live('a'), health: { state: 'error', summary: PORT_HELD } }));
    tray.setSnapshot(snapshot({ ...live('a'), health: { state: 'error', summary: PORT_HELD } }));
    expect(fake().images.map((i) => (i as unknown as { fakeName: string }).fakeName)).toEqual([
      'live',
      'warning',
      'error',
    ]);
    expect(fake().tooltips.at(-1)).toBe(`Tally: ${PORT_HELD} · 1 live`);
    expect(items().map((i) => i.label ?? i.type)).toEqual([
      'Open Tally',
      PORT_HELD,
      'separator',
      '1 live',
      'End a…',
      'separator',
      'Open recordings folder',
      'Pause downloads',
      'Settings…',
      'separator',
      'Quit Tally',
    ]);
    click(PORT_HELD);
    expect(popover).toEqual(['show']);

    tray.setSnapshot(snapshot(live('a')));
    expect(
      fake()
        .images.map((i) => (i as unknown as { fakeName: string }).fakeName)
        .at(-1),
    ).toBe('live');
    expect(items().map((i) => i.label)).not.toContain(PORT_HELD);
  });
});
