import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { ChannelView, SearchResultView } from '../../../electron/contract.js';
import { ManualClock, TestBridge, channel } from '../../testing/bridge.js';
import { SearchStore } from '../stores/search.svelte.js';
import SearchView from './SearchView.svelte';

const NOW = Date.parse('2024-05-14T12:34:56.000Z');

function ended(id: string, created: string, durationSeconds: number | null, sessions: number | null): ChannelView {
  const createdAt = new Date(created).toISOString();
  return channel({
    id,
    state: 'ended',
    createdAt,
    endedAt: durationSeconds === null ? null : new Date(Date.parse(createdAt) + durationSeconds * 1000).toISOString(),
    durationSeconds,
    cumulativeSessions: sessions,
    watchers: null,
  });
}

function setup(result: SearchResultView = { totalCount: 0, channels: [], truncated: false }) {
  const bridge = new TestBridge({ 'channels:search': () => result });
  const store = new SearchStore(bridge.bridge, new ManualClock(NOW));
  render(SearchView, { store });
  return { bridge, store, user: userEvent.setup({ delay: null }) };
}

const submit = (user: ReturnType<typeof userEvent.setup>) => user.click(screen.getByRole('button', { name: 'Search' }));

/** jsdom's Blob has no text(): read it the old way, keeping the BOM. */
function readBlob(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(new TextDecoder('utf-8', { ignoreBOM: true }).decode(reader.result as ArrayBuffer));
    reader.onerror = () => reject(reader.error);
    reader.readAsArrayBuffer(blob);
  });
}

/** Channel IDs of the rendered body rows, top to bottom. */
function renderedIds(): string[] {
  return screen
    .getAllByRole('row')
    .filter((r) => r.getAttribute('aria-rowindex') !== '1')
    .sort((a, b) => Number(a.getAttribute('aria-rowindex')) - Number(b.getAttribute('aria-rowindex')))
    .map((r) => within(r).getAllByRole('cell')[0]!.textContent!.trim());
}

describe('SearchView', () => {
  it('turns each preset into the right period at the injected time', async () => {
    const { bridge, user } = setup();
    const iso = (ms: number) => new Date(ms).toISOString();

    await submit(user);
    await user.click(screen.getByRole('radio', { name: 'Today' }));
    await submit(user);
    await user.click(screen.getByRole('radio', { name: '7 days' }));
    await user.type(screen.getByRole('searchbox', { name: 'Keyword' }), '  show  ');
    await submit(user);

    const midnight = new Date(NOW);
    midnight.setHours(0, 0, 0, 0);
    await waitFor(() => expect(bridge.callsOf('channels:search')).toHaveLength(3));
    expect(bridge.callsOf('channels:search')).toEqual([
      [{ since: iso(NOW - 3_600_000), until: iso(NOW) }],
      [{ since: iso(midnight.getTime()), until: iso(NOW) }],
      [{ since: iso(NOW - 7 * 86_400_000), until: iso(NOW), keyword: 'show' }],
    ]);
  });

  it('reads a custom range as local time and refuses a reversed one', async () => {
    const { bridge, user } = setup();
    await user.click(screen.getByRole('radio', { name: 'Custom' }));
    const from = screen.getByLabelText('From');
    const to = screen.getByLabelText('To');

    await fireEvent.input(from, { target: { value: '2024-05-10T18:00' } });
    await fireEvent.input(to, { target: { value: '2024-05-09T08:00' } });
    await submit(user);
    expect(screen.getByRole('alert')).toHaveTextContent('The start must be before the end.');
    expect(from).toHaveAttribute('aria-invalid', 'true');
    expect(bridge.callsOf('channels:search')).toEqual([]);

    await fireEvent.input(to, { target: { value: '2024-05-11T08:30' } });
    await submit(user);
    await waitFor(() => expect(bridge.callsOf('channels:search')).toHaveLength(1));
    expect(bridge.callsOf('channels:search')[0]).toEqual([
      {
        since: new Date(2024, 4, 10, 18, 0).toISOString(),
        until: new Date(2024, 4, 11, 8, 30).toISOString(),
      },
    ]);
  });

  it('drops the old answer on switching to Custom and reports a reversed range in place, without a stale list', async () => {
    const { bridge, user } = setup({ totalCount: 0, channels: [], truncated: false });
    await submit(user);
    await screen.findByText('No channels in this period');

    await user.click(screen.getByRole('radio', { name: 'Custom' }));
    expect(screen.queryByText('No channels in this period')).not.toBeInTheDocument();
    expect(screen.getByText('Choose a start and an end, then search.')).toBeInTheDocument();

    // Reported as soon as the range is reversed, before any Search, and nothing else below it.
    const to = screen.getByLabelText('To');
    await fireEvent.input(to, { target: { value: '2000-01-01T00:00' } });
    expect(screen.getByRole('alert')).toHaveTextContent('The start must be before the end.');
    expect(to).toHaveAttribute('aria-invalid', 'true');
    expect(screen.queryByText('No channels in this period')).not.toBeInTheDocument();
    expect(screen.queryByText('Choose a start and an end, then search.')).not.toBeInTheDocument();

    // Fixed in place: the error goes as soon as the range is valid again.
    await fireEvent.input(to, { target: { value: '2099-01-01T00:00' } });
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    expect(to).toHaveAttribute('aria-invalid', 'false');
    expect(bridge.callsOf('channels:search')).toHaveLength(1);
  });

  it('shows the total with grouping and a notice when the answer was capped', async () => {
    const { user } = setup({ totalCount: 1234, channels: [ended('a', '2024-05-14T10:00Z', 60, 1)], truncated: true });
    await submit(user);
    expect(await screen.findByText('1,234 channels')).toBeInTheDocument();
    expect(screen.getByRole('note')).toHaveTextContent('1 of 1,234 channels are listed');
  });

  it('sorts by a column, toggling aria-sort and the order; missing values stay last', async () => {
    const { user } = setup({
      totalCount: 3,
      truncated: false,
      channels: [
        ended('short', '2024-05-14T09:00Z', 60, 5),
        ended('still-live', '2024-05-14T11:00Z', null, 40),
        ended('long', '2024-05-14T10:00Z', 7200, 2),
      ],
    });
    await submit(user);
    await screen.findByText('3 channels');

    // Newest first by default.
    expect(screen.getByRole('columnheader', { name: /Created/ })).toHaveAttribute('aria-sort', 'descending');
    expect(renderedIds()).toEqual(['still-live', 'long', 'short']);

    const duration = screen.getByRole('columnheader', { name: /Duration/ });
    await user.click(within(duration).getByRole('button'));
    expect(duration).toHaveAttribute('aria-sort', 'descending');
    expect(screen.getByRole('columnheader', { name: /Created/ })).not.toHaveAttribute('aria-sort');
    expect(renderedIds()).toEqual(['long', 'short', 'still-live']);

    // Keyboard works too: Enter on the header button flips the order.
    within(duration).getByRole('button').focus();
    await user.keyboard('{Enter}');
    expect(duration).toHaveAttribute('aria-sort', 'ascending');
    expect(renderedIds()).toEqual(['short', 'long', 'still-live']);

    await user.click(within(screen.getByRole('columnheader', { name: /Sessions/ })).getByRole('button'));
    expect(renderedIds()).toEqual(['still-live', 'short', 'long']);
  });

  it('exports the sorted results as CSV with quoting and formula protection', async () => {
    const { user } = setup({
      totalCount: 4,
      truncated: false,
      channels: [
        ended('=HYPERLINK("x")', '2024-05-14T10:00:00Z', 30, 1),
        ended('a,b', '2024-05-14T09:00:00Z', 60, 2),
        ended('@sum', '2024-05-14T08:00:00Z', null, null),
        ended('-2+3', '2024-05-14T07:00:00Z', 90, 3),
      ],
    });
    let blob: Blob | undefined;
    vi.spyOn(URL, 'createObjectURL').mockImplementation((b) => {
      blob = b as Blob;
      return 'blob:test';
    });
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => {});
    const clicked: HTMLAnchorElement[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push(this);
    });
    onTestFinished(() => {
      vi.restoreAllMocks();
    });

    await submit(user);
    await user.click(await screen.findByRole('button', { name: 'Export CSV' }));

    expect(clicked).toHaveLength(1);
    expect(clicked[0]!.download).toMatch(/^tally-channels-\d{4}-\d{2}-\d{2}-\d{4}\.csv$/);
    expect(blob?.type).toBe('text/csv;charset=utf-8');
    const text = await readBlob(blob!);
    expect(text.startsWith('\uFEFF')).toBe(true);
    expect(text.slice(1).split('\r\n')).toEqual([
      'channel_id,created_at,ended_at,duration_seconds,cumulative_sessions',
      `"'=HYPERLINK(""x"")",2024-05-14T10:00:00.000Z,2024-05-14T10:00:30.000Z,30,1`,
      '"a,b",2024-05-14T09:00:00.000Z,2024-05-14T09:01:00.000Z,60,2',
      "'@sum,2024-05-14T08:00:00.000Z,,,",
      "'-2+3,2024-05-14T07:00:00.000Z,2024-05-14T07:01:30.000Z,90,3",
      '',
    ]);
  });

  it('keeps 50,000 results virtualised and renders later rows on scroll', async () => {
    const base = Date.parse('2024-05-01T00:00:00Z');
    const channels = Array.from({ length: 50_000 }, (_, i) =>
      ended(`ch-${String(i).padStart(5, '0')}`, new Date(base + i * 1000).toISOString(), 60, i),
    );
    const { user } = setup({ totalCount: 50_000, channels, truncated: false });
    await submit(user);
    await screen.findByText('50,000 channels');

    const table = screen.getByRole('table', { name: 'Search results' });
    expect(table).toHaveAttribute('aria-rowcount', '50001');
    expect(within(table).getAllByRole('row').length).toBeLessThan(60);
    expect(screen.getByText('ch-49999')).toBeInTheDocument();
    expect(screen.queryByText('ch-10000')).not.toBeInTheDocument();

    // Newest first: row 40,000 from the top is ch-09999.
    const viewport = within(table).getAllByRole('rowgroup')[1]!.parentElement!;
    viewport.scrollTop = 40_000 * 44;
    await fireEvent.scroll(viewport);

    expect(await screen.findByText('ch-09999')).toBeInTheDocument();
    expect(screen.queryByText('ch-49999')).not.toBeInTheDocument();
    expect(within(table).getAllByRole('row').length).toBeLessThan(60);
    const row = screen.getByText('ch-09999').closest('[role="row"]')!;
    expect(row).toHaveAttribute('aria-rowindex', String(40_000 + 2));
  });

  it('copies an ID through the bridge and announces it briefly', async () => {
    const { bridge, user } = setup({
      totalCount: 1,
      channels: [ended('show-9', '2024-05-14T10:00Z', 60, 1)],
      truncated: false,
    });
    await submit(user);
    await user.click(await screen.findByRole('button', { name: 'Copy ID show-9' }));

    expect(bridge.clipboard).toEqual(['show-9']);
    expect(await screen.findByText('Copied', { selector: '[role="status"]' })).toBeInTheDocument();
  });

  it('falls back to the browser clipboard when the core has none', async () => {
    const { bridge, user } = setup({
      totalCount: 1,
      channels: [ended('show-9', '2024-05-14T10:00Z', 60, 1)],
      truncated: false,
    });
    bridge.handle('clipboard:write', () => ({ ok: false }));
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    onTestFinished(() => void Reflect.deleteProperty(navigator, 'clipboard'));

    await submit(user);
    await user.click(await screen.findByRole('button', { name: 'Copy ID show-9' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('show-9'));
  });

  it('shows a failed search with Retry', async () => {
    const { bridge, user } = setup();
    bridge.fail('channels:search', 'bad_credentials', 'The service rejected the credentials.');
    await submit(user);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('The service rejected the credentials.');

    bridge.handle('channels:search', () => ({ totalCount: 0, channels: [], truncated: false }));
    await user.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('No channels in this period')).toBeInTheDocument();
    expect(bridge.callsOf('channels:search')).toHaveLength(2);
  });
});
