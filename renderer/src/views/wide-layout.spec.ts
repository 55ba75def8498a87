/**
 * The wide window (800 px and more): Live, Search and Recordings show their list with the selected item in a
 * detail pane beside it, chosen by click or by keyboard focus.
 */
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock, TestBridge, channel, recording } from '../../testing/bridge.js';
import { LiveStore } from '../stores/live.svelte.js';
import { RecordingsStore } from '../stores/recordings.svelte.js';
import { SearchStore } from '../stores/search.svelte.js';
import LiveView from './LiveView.svelte';
import RecordingsView from './RecordingsView.svelte';
import SearchView from './SearchView.svelte';

const NOW = '2024-05-14T12:00:00.000Z';
const user = () => userEvent.setup({ delay: null });

describe('wide layout', () => {
  it('Live: the detail pane gives start, duration, watchers now and at most, and no flat line before history', async () => {
    const bridge = new TestBridge({
      'channels:live': () => [channel({ id: 'main-stage', watchers: 40, createdAt: '2024-05-14T11:13:00.000Z' })],
    });
    const clock = new ManualClock(NOW);
    const store = new LiveStore(bridge.bridge, clock);
    onTestFinished(store.start());
    render(LiveView, { store, wide: true });

    const pane = await screen.findByRole('complementary', { name: 'Selected channel' });
    await within(pane).findByRole('heading', { name: 'main-stage' });
    const value = (term: string) => within(pane).getByText(term).nextElementSibling?.textContent;
    expect(value('Watching now')).toBe('40');
    expect(value('Most watching since opened')).toBe('40');
    expect(value('Live for')).toBe('47m');
    expect(value('Started')).toMatch(/11:13/);
    // One sample: no line that would read as "flat", a sentence instead.
    expect(within(pane).queryByRole('img')).toBeNull();
    expect(pane).toHaveTextContent('No history yet');

    bridge.emit('channels:live', [channel({ id: 'main-stage', watchers: 95, createdAt: '2024-05-14T11:13:00.000Z' })]);
    bridge.emit('channels:live', [channel({ id: 'main-stage', watchers: 61, createdAt: '2024-05-14T11:13:00.000Z' })]);
    await within(pane).findByRole('img', { name: /now 61, lowest 40, highest 95/ });
    expect(value('Watching now')).toBe('61');
    expect(value('Most watching since opened')).toBe('95');
    expect(pane).not.toHaveTextContent('No history yet');

    await user().click(within(pane).getByRole('button', { name: 'End channel main-stage…' }));
    expect(await screen.findByRole('dialog')).toHaveTextContent('End channel main-stage?');
  });

  it('Search: a result chosen by keyboard shows in the detail pane, with Copy ID', async () => {
    const ended = (id: string, created: string, minutes: number, sessions: number) =>
      channel({
        id,
        state: 'ended',
        createdAt: created,
        endedAt: new Date(Date.parse(created) + minutes * 60_000).toISOString(),
        durationSeconds: minutes * 60,
        cumulativeSessions: sessions,
        watchers: null,
      });
    const channels = [
      ended('morning-show', '2024-05-14T06:00:00.000Z', 90, 2408),
      ended('news-0800', '2024-05-14T08:00:00.000Z', 28, 913),
    ];
    const bridge = new TestBridge({ 'channels:search': () => ({ totalCount: 2, channels, truncated: false }) });
    const store = new SearchStore(bridge.bridge, new ManualClock(NOW));
    render(SearchView, { store, wide: true });
    const u = user();
    await u.click(screen.getByRole('button', { name: 'Search' }));

    const pane = await screen.findByRole('complementary', { name: 'Selected channel' });
    // Newest first: the first row is shown until another is chosen.
    const first = await screen.findByRole('button', { name: 'Show news-0800 in detail' });
    await within(pane).findByRole('heading', { name: 'news-0800' });
    expect(first).toHaveAttribute('aria-pressed', 'true');

    // Tab from the first row's ID, past its Copy button, to the second row's ID.
    first.focus();
    await u.tab();
    await u.tab();
    const second = screen.getByRole('button', { name: 'Show morning-show in detail' });
    expect(second).toHaveFocus();
    await within(pane).findByRole('heading', { name: 'morning-show' });
    expect(second).toHaveAttribute('aria-pressed', 'true');
    expect(first).toHaveAttribute('aria-pressed', 'false');
    expect(pane).toHaveTextContent('1h 30m');
    expect(pane).toHaveTextContent('2,408');

    await u.click(within(pane).getByRole('button', { name: 'Copy ID morning-show' }));
    expect(bridge.callsOf('clipboard:write')).toEqual([['morning-show']]);
  });

  it('Recordings: the selected recording shows its state, full reason, file and actions', async () => {
    const reason =
      'The download was redirected to https://elsewhere.example/a/very/long/path/recording.mp4, an origin Tally does not allow; add it in Settings › Advanced if it is yours.';
    const bridge = new TestBridge();
    bridge.handle('recordings:list', () => [
      recording({
        key: 'k1',
        channelId: 'morning-show',
        state: 'saved',
        fileName: 'morning-show.mp4',
        bytes: 2048,
        checks: ['size'],
        receivedAt: '2024-05-14T07:31:00.000Z',
      }),
      recording({
        key: 'k2',
        channelId: 'workshop-a',
        state: 'failed',
        error: reason,
        attempts: 3,
        receivedAt: '2024-05-14T08:56:00.000Z',
      }),
    ]);
    const store = new RecordingsStore(bridge.bridge, new ManualClock(NOW));
    onTestFinished(store.start());
    render(RecordingsView, { store, fileActions: true, tunnel: null, wide: true });

    const pane = await screen.findByRole('complementary', { name: 'Selected recording' });
    // The newest finished one is shown until another is chosen.
    await within(pane).findByRole('heading', { name: /^workshop-a · / });
    expect(pane).toHaveTextContent(`${reason} · after 3 attempts`);
    expect(within(pane).getByText('Failed')).toBeInTheDocument();
    await user().click(within(pane).getByRole('button', { name: /^Retry download of workshop-a/ }));
    expect(bridge.callsOf('recordings:retry')).toEqual([['k2']]);

    const pick = screen.getByRole('button', { name: /^Show morning-show · .* in detail$/ });
    pick.focus();
    await within(pane).findByRole('heading', { name: /^morning-show · / });
    expect(pick).toHaveAttribute('aria-pressed', 'true');
    expect(within(pane).getByText('morning-show.mp4')).toBeInTheDocument();
    expect(within(pane).getByText('Verified')).toBeInTheDocument();
    await user().click(within(pane).getByRole('button', { name: /^Copy path of morning-show/ }));
    await waitFor(() => expect(bridge.callsOf('recordings:path')).toEqual([['k1']]));

    // A filter that hides the selected recording: the pane shows what the list shows, not a hidden one.
    await user().click(screen.getByRole('radio', { name: /^Problems/ }));
    await within(pane).findByRole('heading', { name: /^workshop-a · / });
  });
});
