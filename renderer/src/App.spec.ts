import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import App from './App.svelte';
import { note } from '../../electron/contract.js';
import {
  ManualClock,
  TestBridge,
  appInfo,
  channel,
  healthView,
  recording,
  settingsView,
  tunnelStatus,
} from '../testing/bridge.js';
import type { ConnectionSource, ConnectionState } from './lib/transport-ws.js';

/** A connection the spec drives by hand. */
class FakeConnection implements ConnectionSource {
  state: ConnectionState = 'open';
  readonly #listeners = new Set<(s: ConnectionState) => void>();
  onState(listener: (s: ConnectionState) => void) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  set(state: ConnectionState) {
    this.state = state;
    for (const l of this.#listeners) l(state);
  }
}

function setup(bridge = new TestBridge(), systemLanguage = 'en-US') {
  const connection = new FakeConnection();
  const result = render(App, { bridge: bridge.bridge, connection, clock: new ManualClock(), systemLanguage });
  return { bridge, connection, result, user: userEvent.setup({ delay: null }) };
}

describe('App', () => {
  it('is a tablist with arrow-key navigation and labelled panels', async () => {
    const { user } = setup();
    const live = screen.getByRole('tab', { name: 'Live' });
    expect(live).toHaveAttribute('aria-selected', 'true');
    expect(screen.getByRole('tabpanel', { name: 'Live' })).toBeInTheDocument();

    live.focus();
    await user.keyboard('{ArrowRight}');
    const search = screen.getByRole('tab', { name: 'Search' });
    expect(search).toHaveFocus();
    expect(search).toHaveAttribute('aria-selected', 'true');
    expect(live).toHaveAttribute('tabindex', '-1');
    expect(screen.getByRole('tabpanel', { name: 'Search' })).toBeInTheDocument();

    await user.keyboard('{End}');
    expect(screen.getByRole('tab', { name: 'Settings' })).toHaveFocus();
    await user.keyboard('{ArrowRight}');
    expect(screen.getByRole('tab', { name: 'Live' })).toHaveFocus();
    await user.keyboard('{ArrowLeft}');
    expect(screen.getByRole('tabpanel', { name: 'Settings' })).toBeInTheDocument();
    expect(location.hash).toBe('#settings');
  });

  it('follows a hash change to another tab (the tray opens #settings in an open popover)', async () => {
    setup();
    expect(screen.getByRole('tab', { name: 'Live' })).toHaveAttribute('aria-selected', 'true');
    location.hash = '#settings';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await waitFor(() => expect(screen.getByRole('tab', { name: 'Settings' })).toHaveAttribute('aria-selected', 'true'));
    location.hash = '#nonsense';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    expect(screen.getByRole('tab', { name: 'Settings' })).toHaveAttribute('aria-selected', 'true');
  });

  it('keeps live history while another tab is shown', async () => {
    const bridge = new TestBridge({ 'channels:live': () => [channel({ id: 'alpha', watchers: 2 })] });
    const { user } = setup(bridge);
    await screen.findByText('alpha');
    await user.click(screen.getByRole('tab', { name: 'Search' }));
    bridge.emit('channels:live', [channel({ id: 'alpha', watchers: 8 })]);
    await user.click(screen.getByRole('tab', { name: 'Live' }));
    expect(screen.getByRole('img', { name: /now 8, lowest 2, highest 8/ })).toBeInTheDocument();
  });

  it('switches every label to Korean when the language setting changes', async () => {
    const { bridge, user } = setup();
    await user.click(screen.getByRole('tab', { name: 'Settings' }));
    await user.selectOptions(await screen.findByRole('combobox', { name: 'Language' }), 'ko');

    await waitFor(() => expect(screen.getByRole('tab', { name: '설정' })).toBeInTheDocument());
    expect(bridge.callsOf('settings:update')).toEqual([[{ language: 'ko' }]]);
    expect(screen.getAllByRole('tab').map((t) => t.textContent?.trim())).toEqual(['실시간', '검색', '녹화', '설정']);
    expect(screen.getByRole('combobox', { name: '언어' })).toHaveValue('ko');
    expect(document.documentElement.lang).toBe('ko');

    await user.click(screen.getByRole('tab', { name: '실시간' }));
    expect(await screen.findByText('지금 방송 중인 채널이 없습니다')).toBeInTheDocument();
  });

  it("follows the system language when set to 'system'", async () => {
    const bridge = new TestBridge();
    bridge.settings = settingsView({ language: 'system' });
    setup(bridge, 'ko-KR');
    expect(await screen.findByRole('tab', { name: '검색' })).toBeInTheDocument();
  });

  it('shows the demo pill, a reconnect banner, and refetches after reconnecting', async () => {
    const bridge = new TestBridge({ 'app:info': () => appInfo({ demo: true }) });
    const { connection } = setup(bridge);
    expect(await screen.findByText('Demo')).toBeInTheDocument();
    await waitFor(() => expect(bridge.callsOf('channels:live')).toHaveLength(1));

    connection.set('reconnecting');
    expect(await screen.findByText(/^Reconnecting…/, { selector: '[role="status"]' })).toBeInTheDocument();

    connection.set('open');
    await waitFor(() => expect(screen.queryByText(/^Reconnecting…/, { selector: '[role="status"]' })).toBeNull());
    await waitFor(() => expect(bridge.callsOf('channels:live')).toHaveLength(2));
    expect(bridge.callsOf('recordings:list')).toHaveLength(2);
  });

  it('shows background errors in dismissible banners', async () => {
    const { bridge, user } = setup();
    await waitFor(() => expect(bridge.listenerCount('app:error')).toBe(1));
    bridge.emit('app:error', { code: 'poll_failed', message: 'The live poll failed: service unreachable.' });
    bridge.emit('app:error', { code: 'poll_failed', message: 'The live poll failed: service unreachable.' });

    const alerts = await screen.findAllByRole('alert');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toHaveTextContent('The live poll failed: service unreachable.');
    await user.click(within(alerts[0]!).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows one status area: the newest error with a count, cleared once the core has reconfigured', async () => {
    const { bridge } = setup();
    await waitFor(() => expect(bridge.listenerCount('app:error')).toBe(1));
    bridge.emit('app:error', { code: 'tunnel', message: 'Recordings are not being received: ngrok refused.' });
    bridge.emit('app:error', { code: 'network', message: 'The live poll failed: service unreachable.' });
    const alert = await screen.findByRole('alert');
    expect(screen.getAllByRole('alert')).toHaveLength(1);
    expect(alert).toHaveTextContent('The live poll failed: service unreachable. (and 1 more)');

    // The tunnel status that ends the failing attempt keeps its errors; the next one (the provider switched
    // back to Off, say) ends an attempt that raised none, so they are stale.
    bridge.emit('tunnel:status', tunnelStatus());
    expect(screen.getByRole('alert')).toBeInTheDocument();
    bridge.emit('tunnel:status', tunnelStatus());
    await waitFor(() => expect(screen.queryByRole('alert')).not.toBeInTheDocument());
  });

  it.each([
    ['en-US', /^The change could not be applied, so the previous setup is still receiving recordings: The webhook/],
    ['ko-KR', /^변경 사항을 적용하지 못해 이전 설정으로 계속 녹화를 받고 있습니다: .*The webhook/],
  ])('keeps saying that the previous setup still receives while a change is not applied (%s)', async (lang, text) => {
    const given = new TestBridge();
    given.settings = settingsView({ language: 'system' });
    const { bridge, user } = setup(given, lang);
    await waitFor(() => expect(bridge.listenerCount('app:error')).toBe(1));
    const cause = 'The webhook receiver could not listen on 192.0.2.1:0: EADDRNOTAVAIL.';
    const restartProblem = {
      message: `The change could not be applied, so the previous setup is still receiving recordings: ${cause}`,
      notes: [{ code: 'changeNotApplied' }, { code: 'error', params: { message: cause, errorCode: 'config' } }],
    };
    bridge.emit('app:error', { code: 'config', message: restartProblem.message });
    bridge.emit('tunnel:status', tunnelStatus({ restartProblem }));
    // The error is dismissed (or goes stale with the next tunnel push): the status area still says what receives.
    await user.click(within(await screen.findByRole('alert')).getByRole('button'));
    bridge.emit('tunnel:status', tunnelStatus({ restartProblem }));
    const status = await screen.findByText(text, { selector: '[role="status"]' });
    expect(status).toBeInTheDocument();
    // Applied at last: the line goes.
    bridge.emit('tunnel:status', tunnelStatus({ restartProblem: null }));
    await waitFor(() => expect(screen.queryByText(text)).not.toBeInTheDocument());
  });

  it('unsubscribes from every event when closed', async () => {
    const { bridge, result } = setup();
    await waitFor(() => expect(bridge.listenerCount('channels:live')).toBe(1));
    result.unmount();
    for (const event of ['channels:live', 'recordings:changed', 'settings:changed', 'app:error'] as const) {
      expect(bridge.listenerCount(event)).toBe(0);
    }
  });

  describe('health line', () => {
    const portHeld = () => {
      const view = healthView();
      const receiver = {
        id: 'receiver' as const,
        state: 'error' as const,
        reason: 'Port 8787 is in use by another program: webhooks cannot reach Tally.',
        reasonNotes: [note('healthPortHeld', { port: 8787 })],
        action:
          'Stop that program, or choose another port in Settings → How the service reaches Tally → Receiver port and forward your public URL to it. Tally keeps trying port 8787.',
        actionNotes: [note('healthPortActionApp', { port: 8787 })],
      };
      return {
        ...view,
        state: 'error' as const,
        summary: receiver.reason,
        summaryNotes: receiver.reasonNotes,
        components: [receiver, ...view.components.slice(1)],
        receiver: { host: '127.0.0.1', port: null, configuredPort: 8787, portFollows: false },
      };
    };

    it('shows the overall health under the header and follows health:changed', async () => {
      const { bridge } = setup();
      const line = await screen.findByRole('region', { name: 'Health' });
      expect(line).toHaveClass('ok');
      expect(within(line).getByRole('status')).toHaveTextContent(
        'OK: All is well: webhooks reach Tally and recordings are saved.',
      );
      // The link to the page's own core is still there, small, and says only that.
      expect(screen.getByText('Connected')).toBeInTheDocument();

      bridge.emit('health:changed', portHeld());
      await waitFor(() => expect(line).toHaveClass('error'));
      expect(within(line).getByRole('status')).toHaveTextContent(
        'Error: Port 8787 is in use by another program: webhooks cannot reach Tally.',
      );
    });

    it('unfolds every component with its reason and the action to take', async () => {
      const bridge = new TestBridge();
      bridge.health = portHeld();
      const { user } = setup(bridge);
      const line = await screen.findByRole('region', { name: 'Health' });
      await waitFor(() => expect(line).toHaveClass('error'));
      const details = within(line).getByRole('button', { name: 'Details' });
      expect(details).toHaveAttribute('aria-expanded', 'false');
      await user.click(details);
      expect(details).toHaveAttribute('aria-expanded', 'true');
      const items = within(line).getAllByRole('listitem');
      expect(items.map((li) => li.querySelector('.name')?.textContent)).toEqual([
        'Receiver',
        'Public URL',
        'Registration',
        'Downloads',
        'Disk space',
      ]);
      expect(items[0]).toHaveTextContent('(Error) Port 8787 is in use by another program');
      expect(items[0]).toHaveTextContent('Settings → How the service reaches Tally → Receiver port');
      expect(items[1]).toHaveTextContent('(OK) The public URL forwards to this receiver');
      await user.click(within(line).getByRole('button', { name: 'Hide' }));
      expect(within(line).queryByRole('listitem')).not.toBeInTheDocument();
    });

    it('takes the producer to Recordings → Problems when recordings need them', async () => {
      const bridge = new TestBridge();
      bridge.handle('recordings:list', () => [
        recording({ key: 'f', channelId: 'failed-show', state: 'failed', error: 'HTTP 500' }),
        recording({ key: 's', channelId: 'fine-show', state: 'saved', fileName: 'fine.mp4' }),
      ]);
      const { user } = setup(bridge);
      const line = await screen.findByRole('region', { name: 'Health' });
      expect(within(line).queryByRole('button', { name: /problem/ })).not.toBeInTheDocument();
      bridge.emit('health:changed', healthView({ state: 'warning', problems: 1 }));
      await user.click(await within(line).findByRole('button', { name: '1 problem' }));
      expect(screen.getByRole('tab', { name: 'Recordings' })).toHaveAttribute('aria-selected', 'true');
      expect(await screen.findByRole('radio', { name: 'Problems 1' })).toBeChecked();
      expect(screen.getByText(/^failed-show · /)).toBeInTheDocument();
      expect(screen.queryByText(/^fine-show · /)).not.toBeInTheDocument();
    });

    it('says it in Korean through the notes', async () => {
      const bridge = new TestBridge();
      bridge.settings = settingsView({ language: 'ko' });
      bridge.health = portHeld();
      const { user } = setup(bridge);
      const line = await screen.findByRole('region', { name: '상태' });
      await waitFor(() =>
        expect(within(line).getByRole('status')).toHaveTextContent(
          '오류: 8787번 포트를 다른 프로그램이 사용 중이라 웹훅이 Tally에 도착할 수 없습니다.',
        ),
      );
      await user.click(within(line).getByRole('button', { name: '자세히' }));
      expect(within(line).getAllByRole('listitem')[0]).toHaveTextContent(
        '설정 → 서비스가 Tally에 연결하는 방법 → 수신 포트',
      );
    });
  });
});
