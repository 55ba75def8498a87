import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ChannelView } from '../../../electron/contract.js';
import { ManualClock, TestBridge, channel, deferred } from '../../testing/bridge.js';
import { LiveStore } from '../stores/live.svelte.js';
import LiveView from './LiveView.svelte';

const NOW = '2024-05-14T12:00:00.000Z';

function setup(bridge: TestBridge) {
  const clock = new ManualClock(NOW);
  const store = new LiveStore(bridge.bridge, clock);
  onTestFinished(store.start());
  render(LiveView, { store });
  return { store, clock };
}

const rows = () => within(screen.getByRole('list', { name: 'Live channels' })).getAllByRole('listitem');

const ROW = 44;
const many = (count: number) =>
  Array.from({ length: count }, (_, i) => channel({ id: `ch-${String(i).padStart(5, '0')}`, watchers: i }));

/** Scrolls the live list so the row at `index` is at the top, as a wheel or scrollbar would. */
async function scrollTo(index: number) {
  const viewport = screen.getByRole('list', { name: 'Live channels' }).parentElement!;
  viewport.scrollTop = index * ROW;
  await fireEvent.scroll(viewport);
}

describe('LiveView', () => {
  it('renders each live channel with watchers, a ticking age and a named sparkline', async () => {
    const bridge = new TestBridge({
      'channels:live': () => [
        channel({ id: 'alpha', watchers: 12, createdAt: '2024-05-14T10:55:00.000Z' }),
        channel({ id: 'beta', watchers: 1, createdAt: '2024-05-14T11:59:30.000Z' }),
      ],
    });
    const { clock } = setup(bridge);

    await waitFor(() => expect(rows()).toHaveLength(2));
    const [alpha, beta] = rows() as [HTMLElement, HTMLElement];
    expect(within(alpha).getByText('alpha')).toBeInTheDocument();
    expect(within(alpha).getByText('12 watchers')).toBeInTheDocument();
    expect(within(alpha).getByText(/Live for 1h 5m/)).toBeInTheDocument();
    expect(within(beta).getByText('1 watcher')).toBeInTheDocument();
    expect(within(beta).getByText(/Live for 30s/)).toBeInTheDocument();
    expect(within(alpha).getByRole('img', { name: /now 12, lowest 12, highest 12/ })).toBeInTheDocument();

    // The age keeps moving between polls.
    clock.advance(60_000);
    await waitFor(() => expect(within(beta).getByText(/Live for 1m/)).toBeInTheDocument());
  });

  it('extends the sparkline with every pushed list', async () => {
    const bridge = new TestBridge({ 'channels:live': () => [channel({ id: 'alpha', watchers: 3 })] });
    setup(bridge);
    await screen.findByText('alpha');

    bridge.emit('channels:live', [channel({ id: 'alpha', watchers: 9 })]);
    bridge.emit('channels:live', [channel({ id: 'alpha', watchers: 5 })]);

    const spark = await screen.findByRole('img', { name: /now 5, lowest 3, highest 9/ });
    expect(spark.querySelector('polyline')?.getAttribute('points')?.split(' ')).toHaveLength(3);
    expect(screen.getByText('5 watchers')).toBeInTheDocument();
  });

  it('filters rows by a case-insensitive substring of the ID', async () => {
    const bridge = new TestBridge({
      'channels:live': () => [channel({ id: 'Morning-Show' }), channel({ id: 'evening-news' })],
    });
    setup(bridge);
    await waitFor(() => expect(rows()).toHaveLength(2));

    await userEvent.type(screen.getByRole('searchbox', { name: 'Filter channels' }), 'MORNING');
    expect(rows()).toHaveLength(1);
    expect(rows()[0]).toHaveTextContent('Morning-Show');

    await userEvent.clear(screen.getByRole('searchbox', { name: 'Filter channels' }));
    await userEvent.type(screen.getByRole('searchbox', { name: 'Filter channels' }), 'zzz');
    expect(screen.getByText('No live channel matches “zzz”')).toBeInTheDocument();
  });

  it('ends a channel only after a confirmation that names it, then removes the row', async () => {
    const bridge = new TestBridge({
      'channels:live': () => [channel({ id: 'keep-me' }), channel({ id: 'show-42' })],
    });
    setup(bridge);
    const user = userEvent.setup({ delay: null });
    const endButton = await screen.findByRole('button', { name: 'End channel show-42…' });

    await user.click(endButton);
    const dialog = screen.getByRole('dialog', { name: 'End channel show-42?' });
    expect(dialog).toHaveAccessibleDescription('Viewers will be disconnected.');
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toHaveFocus();
    expect(bridge.callsOf('channels:end')).toEqual([]);

    // Focus stays inside the dialog.
    await user.tab();
    expect(within(dialog).getByRole('button', { name: 'End channel' })).toHaveFocus();
    await user.tab();
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toHaveFocus();

    await user.click(within(dialog).getByRole('button', { name: 'End channel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(bridge.callsOf('channels:end')).toEqual([['show-42']]);
    expect(rows()).toHaveLength(1);
    expect(screen.queryByText('show-42')).not.toBeInTheDocument();

    // A poll that still lists the ended channel does not bring the row back.
    bridge.emit('channels:live', [channel({ id: 'keep-me' }), channel({ id: 'show-42' })]);
    expect(rows()).toHaveLength(1);
  });

  it('cancels with Escape, restoring focus and calling nothing', async () => {
    const bridge = new TestBridge({ 'channels:live': () => [channel({ id: 'show-1' })] });
    setup(bridge);
    const user = userEvent.setup({ delay: null });
    const endButton = await screen.findByRole('button', { name: 'End channel show-1…' });

    await user.click(endButton);
    expect(screen.getByRole('dialog')).toBeInTheDocument();
    await user.keyboard('{Escape}');

    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(endButton).toHaveFocus();
    expect(bridge.callsOf('channels:end')).toEqual([]);
  });

  it('shows the failure inside the dialog and keeps the row when ending fails', async () => {
    const bridge = new TestBridge({ 'channels:live': () => [channel({ id: 'show-7' })] });
    bridge.fail('channels:end', 'not_ended', 'The service did not end channel "show-7".');
    setup(bridge);
    const user = userEvent.setup({ delay: null });

    await user.click(await screen.findByRole('button', { name: 'End channel show-7…' }));
    await user.click(screen.getByRole('button', { name: 'End channel' }));

    const alert = await within(screen.getByRole('dialog')).findByRole('alert');
    expect(alert).toHaveTextContent('Could not end the channel: The service did not end channel "show-7".');
    expect(rows()).toHaveLength(1);
  });

  it('treats "no live channel" as done: the channel ended on its own between the click and the answer', async () => {
    const bridge = new TestBridge({ 'channels:live': () => [channel({ id: 'show-8' }), channel({ id: 'show-9' })] });
    // What the core answers when the service no longer lists the channel (UnknownChannelError).
    bridge.fail('channels:end', 'unknown_channel', 'The service has no live channel with ID "show-8".');
    setup(bridge);
    const user = userEvent.setup({ delay: null });

    await user.click(await screen.findByRole('button', { name: 'End channel show-8…' }));
    await user.click(screen.getByRole('button', { name: 'End channel' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    expect(screen.getByRole('status', { name: '' })).toHaveTextContent('Channel show-8 had already ended on its own');
    expect(rows()).toHaveLength(1);
    await waitFor(() => expect(screen.getByRole('button', { name: 'End channel show-9…' })).toHaveFocus());
  });

  it('disables the confirm button while the end request is pending', async () => {
    const pending = deferred<{ ended: true }>();
    const bridge = new TestBridge({
      'channels:live': () => [channel({ id: 'slow' })],
      'channels:end': () => pending.promise,
    });
    setup(bridge);
    const user = userEvent.setup({ delay: null });
    await user.click(await screen.findByRole('button', { name: 'End channel slow…' }));
    await user.click(screen.getByRole('button', { name: 'End channel' }));

    expect(await screen.findByRole('button', { name: 'Ending…' })).toBeDisabled();
    pending.resolve({ ended: true });
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('shows skeleton rows while loading, then the empty state', async () => {
    const first = deferred<ChannelView[]>();
    const bridge = new TestBridge({ 'channels:live': () => first.promise });
    setup(bridge);

    expect(screen.getByRole('list', { name: 'Live channels' })).toHaveAttribute('aria-busy', 'true');
    expect(screen.getByText('Loading live channels…')).toHaveAttribute('role', 'status');

    first.resolve([]);
    expect(await screen.findByText('No channels are live right now')).toBeInTheDocument();
    expect(screen.getByText(/Channels appear here as soon as a broadcast starts/)).toBeInTheDocument();
  });

  it('shows the error with Retry, and Retry asks again', async () => {
    let attempts = 0;
    const bridge = new TestBridge({
      'channels:live': () => {
        attempts += 1;
        if (attempts === 1) throw new Error('The service is unreachable.');
        return [channel({ id: 'back' })];
      },
    });
    setup(bridge);

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Could not load live channels');
    expect(alert).toHaveTextContent('The service is unreachable.');

    await userEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('back')).toBeInTheDocument();
    expect(bridge.callsOf('channels:live')).toHaveLength(2);
  });

  it('keeps 10,000 channels virtualised, renders later rows on scroll and still ends them', async () => {
    const bridge = new TestBridge({ 'channels:live': () => many(10_000) });
    setup(bridge);
    const user = userEvent.setup({ delay: null });
    await screen.findByText('ch-00000');
    expect(screen.getByText('10,000 live')).toBeInTheDocument();
    expect(rows().length).toBeLessThan(100);
    // Screen readers still hear the size of the whole list and each row's place in it.
    expect(rows()[0]).toHaveAttribute('aria-setsize', '10000');
    expect(rows()[0]).toHaveAttribute('aria-posinset', '1');
    expect(screen.queryByText('ch-07000')).not.toBeInTheDocument();

    await scrollTo(7000);
    const row = (await screen.findByText('ch-07000')).closest('li')!;
    expect(row).toHaveAttribute('aria-posinset', '7001');
    expect(within(row).getByText('7,000 watchers')).toBeInTheDocument();
    expect(within(row).getByRole('img', { name: /now 7,000/ })).toBeInTheDocument();
    expect(screen.queryByText('ch-00000')).not.toBeInTheDocument();
    expect(rows().length).toBeLessThan(100);

    await user.click(within(row).getByRole('button', { name: 'End channel ch-07000…' }));
    const dialog = screen.getByRole('dialog', { name: 'End channel ch-07000?' });
    await user.click(within(dialog).getByRole('button', { name: 'End channel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(bridge.callsOf('channels:end')).toEqual([['ch-07000']]);
    expect(screen.queryByText('ch-07000')).not.toBeInTheDocument();
    expect(screen.getByText('ch-07001')).toBeInTheDocument();
    expect(screen.getByText('9,999 live')).toBeInTheDocument();
    // Focus stays in the list, on the channel that took the ended one's place.
    await waitFor(() => expect(screen.getByRole('button', { name: 'End channel ch-07001…' })).toHaveFocus());
    expect(screen.getByText('Channel ch-07000 ended')).toBeVisible();
  });

  it('returns focus to the End button even after its row left the DOM or moved', async () => {
    const list = many(1000);
    const bridge = new TestBridge({ 'channels:live': () => list });
    setup(bridge);
    const user = userEvent.setup({ delay: null });
    const endOf = (id: string) => screen.getByRole('button', { name: `End channel ${id}…` });

    // Scrolled away while the dialog was open: the row is rendered again, in view, and its button focused.
    await user.click(await screen.findByRole('button', { name: 'End channel ch-00003…' }));
    await scrollTo(600);
    expect(screen.queryByText('ch-00003')).not.toBeInTheDocument();
    await user.keyboard('{Escape}');
    await waitFor(() => expect(endOf('ch-00003')).toHaveFocus());

    // A poll moved the channel far down the list meanwhile: focus follows the channel, not the position.
    await user.click(endOf('ch-00004'));
    const moved = [...list.slice(0, 4), ...list.slice(5, 900), list[4]!, ...list.slice(900)];
    bridge.emit('channels:live', moved);
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(endOf('ch-00004')).toHaveFocus());
    expect(endOf('ch-00004').closest('li')).toHaveAttribute('aria-posinset', '900');

    // A channel that ended on its own while the dialog was open: the dialog closes by itself, says so, and
    // focus goes to the channel that followed it.
    await scrollTo(0);
    await user.click(endOf('ch-00005'));
    bridge.emit('channels:live', list.slice(0, 5).concat(list.slice(6)));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(screen.getByText('Channel ch-00005 had already ended on its own')).toBeVisible();
    await waitFor(() => expect(endOf('ch-00006')).toHaveFocus());
    expect(bridge.callsOf('channels:end')).toEqual([]);

    // With no channel left at all, focus goes to the filter box.
    await user.click(endOf('ch-00006'));
    bridge.emit('channels:live', []);
    await waitFor(() => expect(screen.getByRole('searchbox', { name: 'Filter channels' })).toHaveFocus());
  });

  it('keeps the focused row in the DOM while it is scrolled out of view', async () => {
    const bridge = new TestBridge({ 'channels:live': () => many(1000) });
    setup(bridge);
    const button = await screen.findByRole('button', { name: 'End channel ch-00002…' });
    button.focus();

    await scrollTo(500);
    expect(await screen.findByText('ch-00500')).toBeInTheDocument();
    expect(button).toBeInTheDocument();
    expect(button).toHaveFocus();
    expect(rows().length).toBeLessThan(100);

    // Once focus leaves the list the row is let go.
    screen.getByRole('searchbox', { name: 'Filter channels' }).focus();
    await waitFor(() => expect(button).not.toBeInTheDocument());
  });
});
