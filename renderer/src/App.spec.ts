import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import App from './App.svelte';
import { ManualClock, TestBridge, appInfo, channel, settingsView, tunnelStatus } from '../testing/bridge.js';
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
});
