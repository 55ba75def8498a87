import { describe, expect, it } from 'vitest';
import { fakeNotificationFactory } from '../../tests/fakes/electron.js';
import { DEDUPE_WINDOW_MS, NotificationService } from './notifications.js';
import type { NotifyPayload } from './notifications.js';
import { ProgressService } from './progress.js';

function setup(supported = true) {
  const factory = fakeNotificationFactory();
  const revealed: string[] = [];
  const logged: string[] = [];
  let popovers = 0;
  let now = 0;
  const service = new NotificationService({
    createNotification: factory.create,
    isSupported: () => supported,
    reveal: (path) => revealed.push(path),
    showPopover: () => popovers++,
    now: () => now,
    log: (line) => logged.push(line),
  });
  return {
    service,
    logged,
    made: factory.made,
    revealed,
    popovers: () => popovers,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const saved = (name: string): NotifyPayload => ({
  kind: 'saved',
  title: 'Recording saved',
  body: name,
  path: `/rec/${name}`,
});
const failed: NotifyPayload = { kind: 'failed', title: 'Download failed', body: 'ch-1: the link expired' };
const expired: NotifyPayload = { kind: 'expired', title: 'Recording expired', body: 'ch-2' };
const unreachable: NotifyPayload = { kind: 'unreachable', title: 'Webhook unreachable', body: 'The tunnel is down' };

describe('NotificationService', () => {
  it('shows a saved recording; clicking it reveals the file', () => {
    const { service, made, revealed } = setup();
    expect(service.notify(saved('a.mp4'))).toBe(true);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ shown: true, options: { title: 'Recording saved', body: 'a.mp4' } });
    made[0]!.click();
    expect(revealed).toEqual(['/rec/a.mp4']);
  });

  it("says a core reason (the health's, a recording's error) in the tray app's language", () => {
    const factory = fakeNotificationFactory();
    const service = new NotificationService({
      createNotification: factory.create,
      isSupported: () => true,
      reveal: () => undefined,
      showPopover: () => undefined,
      language: () => 'ko',
    });
    service.notify({
      kind: 'health',
      title: 'Recordings are at risk',
      body: 'Port 8787 is in use by another program: webhooks cannot reach Tally.',
      bodyNotes: [{ code: 'healthPortHeld', params: { port: 8787 } }],
      text: { title: { key: 'healthTitle' } },
    });
    expect(factory.made[0]?.options).toMatchObject({
      title: '녹화가 위험합니다',
      body: '8787번 포트를 다른 프로그램이 사용 중이라 웹훅이 Tally에 도착할 수 없습니다.',
    });
  });

  it('a notification without a file opens the popover when clicked', () => {
    const { service, made, popovers } = setup();
    service.notify(unreachable);
    made[0]!.click();
    expect(popovers()).toBe(1);
  });

  it('respects each notification setting (failed covers expired)', () => {
    const { service, made } = setup();
    service.setSettings({ saved: false, failed: true, unreachable: false, live: false });
    expect(service.notify(saved('a.mp4'))).toBe(false);
    expect(service.notify(unreachable)).toBe(false);
    expect(service.notify(failed)).toBe(true);
    service.setSettings({ saved: true, failed: false, unreachable: true, live: false });
    expect(service.notify(expired)).toBe(false);
    expect(service.notify(unreachable)).toBe(true);
    expect(made.map((n) => n.options.title)).toEqual(['Download failed', 'Webhook unreachable']);
  });

  it('shows refused webhooks under the unreachable setting: either way recordings stop arriving', () => {
    const { service } = setup();
    const refusing: NotifyPayload = { kind: 'refusing', title: 'New recordings are being refused', body: 'full' };
    service.setSettings({ saved: true, failed: true, unreachable: false, live: true });
    expect(service.notify(refusing)).toBe(false);
    service.setSettings({ saved: false, failed: false, unreachable: true, live: false });
    expect(service.notify(refusing)).toBe(true);
  });

  it('shows a turn of the health to error under the unreachable setting, and opens the popover on click', () => {
    const { service, made, popovers } = setup();
    const health: NotifyPayload = {
      kind: 'health',
      title: 'Recordings are at risk',
      body: 'Port 8787 is in use by another program: webhooks cannot reach Tally.',
    };
    service.setSettings({ saved: true, failed: true, unreachable: false, live: true });
    expect(service.notify(health)).toBe(false);
    service.setSettings({ saved: false, failed: false, unreachable: true, live: false });
    expect(service.notify(health)).toBe(true);
    expect(made.map((n) => [n.options.title, n.options.body, n.options.silent])).toEqual([
      ['Recordings are at risk', 'Port 8787 is in use by another program: webhooks cannot reach Tally.', false],
    ]);
    made[0]!.click();
    expect(popovers()).toBe(1);
  });

  it('shows nothing where the OS has no notifications', () => {
    const { service, made } = setup(false);
    expect(service.notify(failed)).toBe(false);
    expect(made).toEqual([]);
  });

  it('drops an identical notification within the window, shows it again after', () => {
    const { service, made, advance } = setup();
    service.notify(unreachable);
    advance(DEDUPE_WINDOW_MS - 1);
    expect(service.notify(unreachable)).toBe(false);
    advance(1);
    expect(service.notify(unreachable)).toBe(true);
    expect(made).toHaveLength(2);
  });

  it('collapses a burst of saved recordings into one notification that reveals the latest', () => {
    const { service, made, revealed, advance } = setup();
    service.notify(saved('a.mp4'));
    advance(1000);
    service.notify(saved('b.mp4'));
    advance(1000);
    service.notify(saved('c.mp4'));
    expect(made.map((n) => [n.options.title, n.closed])).toEqual([
      ['Recording saved', true],
      ['2 recordings saved', true],
      ['3 recordings saved', false],
    ]);
    expect(made[2]!.options.body).toBe('Latest: c.mp4');
    made[2]!.click();
    expect(revealed).toEqual(['/rec/c.mp4']);

    // After the burst is clicked away, the next one starts afresh.
    service.notify(saved('d.mp4'));
    expect(made.at(-1)!.options.title).toBe('Recording saved');
  });

  it('forgets a notification the OS refused (unsigned macOS app), so the next save is not merged into it', () => {
    const { service, made, logged, advance } = setup();
    service.notify(saved('a.mp4'));
    made[0]!.fail('Notifications are not allowed for this application');
    expect(logged).toEqual(['notification not shown: Notifications are not allowed for this application']);
    advance(1000);
    service.notify(saved('b.mp4'));
    expect(made[1]!.options).toMatchObject({ title: 'Recording saved', body: 'b.mp4' });
    expect(made[0]!.closed).toBe(false);
  });
});

describe('ProgressService', () => {
  it('mirrors downloads into the progress bar and badge, touching the OS only on change', () => {
    const bar: [number, string][] = [];
    const badge: number[] = [];
    const progress = new ProgressService({
      setProgressBar: (v, m) => bar.push([v, m]),
      setBadgeCount: (n) => badge.push(n),
    });
    progress.update({ downloading: 0, progress: null });
    progress.update({ downloading: 2, progress: null });
    progress.update({ downloading: 2, progress: 0.25 });
    progress.update({ downloading: 2, progress: 0.25 });
    progress.update({ downloading: 1, progress: 1.7 });
    progress.update({ downloading: 0, progress: null });
    expect(bar).toEqual([
      [-1, 'none'],
      [2, 'indeterminate'],
      [0.25, 'normal'],
      [1, 'normal'],
      [-1, 'none'],
    ]);
    expect(badge).toEqual([0, 2, 1, 0]);
    progress.invalidate();
    progress.update({ downloading: 0, progress: null });
    expect(bar).toHaveLength(6);
  });
});
