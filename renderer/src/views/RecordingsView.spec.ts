import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import { note, notesText, type RecordingView, type TunnelStatus } from '../../../electron/contract.js';
import { setLocale } from '../lib/i18n.js';
import { ManualClock, TestBridge, gapReport, healthView, recording, tunnelStatus } from '../../testing/bridge.js';
import { HealthStore } from '../stores/health.svelte.js';
import { RecordingsStore } from '../stores/recordings.svelte.js';
import RecordingsView from './RecordingsView.svelte';

const NOW = Date.parse('2024-05-14T12:00:00.000Z');
const inMinutes = (m: number) => new Date(NOW + m * 60_000).toISOString();

function setup(
  list: RecordingView[],
  options: { fileActions?: boolean; tunnel?: TunnelStatus | null; bridge?: TestBridge } = {},
) {
  const bridge = options.bridge ?? new TestBridge();
  bridge.handle('recordings:list', () => list);
  const clock = new ManualClock(NOW);
  const store = new RecordingsStore(bridge.bridge, clock);
  onTestFinished(store.start());
  const view = render(RecordingsView, {
    store,
    fileActions: options.fileActions ?? true,
    tunnel: options.tunnel ?? null,
  });
  return { bridge, clock, store, view, user: userEvent.setup({ delay: null }) };
}

/** `setup` that also returns the rendered container (images have no role to find them by). */
function setupWithContainer(list: RecordingView[], bridge: TestBridge) {
  bridge.handle('recordings:list', () => list);
  const store = new RecordingsStore(bridge.bridge, new ManualClock(NOW));
  onTestFinished(store.start());
  return render(RecordingsView, { store, fileActions: true, tunnel: null });
}

const section = (name: string) => screen.getByRole('region', { name });

describe('RecordingsView', () => {
  it('shows download progress, rate, ETA and the deletion deadline', async () => {
    setup([
      recording({
        key: 'k1',
        channelId: 'show-1',
        state: 'downloading',
        bytes: 25_000_000,
        totalBytes: 100_000_000,
        rate: 2_500_000,
        etaSeconds: 30,
        deadline: inMinutes(5 * 60 + 12),
      }),
    ]);
    const bar = await screen.findByRole('progressbar', { name: 'Download of show-1' });
    expect(bar).toHaveAttribute('aria-valuenow', '25');
    expect(bar).toHaveAttribute('aria-valuemax', '100');
    expect(bar).toHaveAttribute('aria-valuetext', '25 MB of 100 MB');
    const item = bar.closest('li')!;
    expect(item).toHaveTextContent('2.5 MB/s');
    expect(item).toHaveTextContent('30s left');
    const deadline = within(item).getByText('Expires in 5h 12m');
    expect(deadline).toHaveClass('ok');
  });

  it('turns the deadline amber under an hour and red under 15 minutes as time passes', async () => {
    const { clock } = setup([recording({ key: 'k', channelId: 'late', state: 'pending', deadline: inMinutes(61) })]);
    const bar = await screen.findByRole('progressbar', { name: 'Download of late' });
    expect(bar).not.toHaveAttribute('aria-valuenow');
    expect(bar).toHaveAttribute('aria-valuetext', 'Waiting to download');
    expect(screen.getByText(/Expires in/)).toHaveClass('ok');

    clock.advance(2 * 60_000);
    await waitFor(() => expect(screen.getByText('Expires in 59m')).toHaveClass('soon'));

    clock.advance(45 * 60_000);
    await waitFor(() => expect(screen.getByText('Expires in 14m')).toHaveClass('urgent'));
  });

  it('merges progress and change events by key and never moves a finished one back', async () => {
    const { bridge } = setup([
      recording({ key: 'k1', channelId: 'show-1', state: 'downloading', bytes: 0, totalBytes: 1000 }),
    ]);
    await screen.findByRole('progressbar', { name: 'Download of show-1' });

    bridge.emit(
      'recordings:progress',
      recording({ key: 'k1', channelId: 'show-1', state: 'downloading', bytes: 500, totalBytes: 1000 }),
    );
    await waitFor(() =>
      expect(screen.getByRole('progressbar', { name: 'Download of show-1' })).toHaveAttribute('aria-valuenow', '50'),
    );

    bridge.emit(
      'recordings:changed',
      recording({ key: 'k1', channelId: 'show-1', state: 'saved', fileName: 'show-1.mp4', bytes: 1000 }),
    );
    // A throttled progress update that trails the state change.
    bridge.emit(
      'recordings:progress',
      recording({ key: 'k1', channelId: 'show-1', state: 'downloading', bytes: 900, totalBytes: 1000 }),
    );

    await waitFor(() => expect(within(section('Today')).getByText(/show-1\.mp4/)).toBeInTheDocument());
    expect(screen.queryByRole('progressbar')).not.toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'In progress' })).not.toBeInTheDocument();
  });

  it('titles a saved file by channel and time, and opens, reveals, copies its path and removes it', async () => {
    const saved = recording({
      key: 'k9',
      channelId: 'show-9',
      state: 'saved',
      fileName: 'show-9.mp4',
      bytes: 2048,
      checks: ['size', 'md5'],
    });
    const { bridge, user, view } = setup([saved]);
    await user.click(await screen.findByRole('button', { name: /^Open show-9 · \d/ }));
    // Opening takes the desktop a moment: the page says it is on its way.
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(/^Opening show-9 · .*…$/));
    await user.click(screen.getByRole('button', { name: /^Show show-9 · .* in folder$/ }));
    expect(bridge.callsOf('recordings:open')).toEqual([['k9']]);
    expect(bridge.callsOf('recordings:reveal')).toEqual([['k9']]);
    const item = screen.getByRole('listitem');
    expect(item).toHaveTextContent(/^show-9 · .*Verified.*Saved and verified \(size, MD5\) · 2 kB · show-9\.mp4/);

    await user.click(screen.getByRole('button', { name: /^Copy path of show-9/ }));
    expect(bridge.callsOf('recordings:path')).toEqual([['k9']]);
    expect(bridge.callsOf('clipboard:write')).toEqual([['/recordings/k9.mp4']]);
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent('Path copied'));

    // Remove hides it at once and offers Undo; the core hears of it only when that offer ends.
    await user.click(screen.getByRole('button', { name: /^Remove show-9 .* from list$/ }));
    await waitFor(() => expect(screen.queryByRole('listitem')).not.toBeInTheDocument());
    await waitFor(() =>
      expect(screen.getByRole('status')).toHaveTextContent(/removed from the list\. The file stays where it was\./),
    );
    expect(bridge.callsOf('recordings:remove')).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Undo' }));
    await screen.findByRole('listitem');
    await waitFor(() => expect(screen.getByRole('status')).toHaveTextContent(/is back in the list\.$/));
    expect(bridge.callsOf('recordings:remove')).toEqual([]);

    await user.click(screen.getByRole('button', { name: /^Remove show-9 .* from list$/ }));
    // Leaving the tab ends the offer: the removal goes through.
    view.unmount();
    await waitFor(() => expect(bridge.callsOf('recordings:remove')).toEqual([['k9']]));
  });

  it('tags a saved recording Verified only where its download passed a check', async () => {
    setup([
      recording({ key: 'v1', channelId: 'checked', state: 'saved', fileName: 'a.mp4', checks: ['size'] }),
      recording({ key: 'v2', channelId: 'unchecked', state: 'saved', fileName: 'b.mp4', checks: [] }),
      recording({ key: 'v3', channelId: 'older', state: 'saved', fileName: 'c.mp4' }),
      recording({ key: 'v4', channelId: 'panel', source: 'client', state: 'saved', fileName: 'd.webm' }),
      recording({
        key: 'v5',
        channelId: 'morning-show',
        state: 'saved',
        fileName: 'e.mp4',
        checks: ['short'],
        bytes: 1_572_864,
        totalBytes: 3_145_728,
      }),
    ]);
    const tag = (id: string) => {
      const item = screen.getAllByRole('listitem').find((li) => li.textContent?.startsWith(id))!;
      return [item.querySelector('.state-tag')?.textContent, item.querySelector('p')?.textContent];
    };
    await screen.findByText(/^checked · /);
    // A size alone is said as such (issue 20): the right length of the wrong bytes would pass it.
    expect(tag('checked')).toEqual([
      'Verified',
      expect.stringMatching(/^Saved; only its size could be checked \(the server gave no checksum\)/),
    ]);
    expect(tag('unchecked')).toEqual([
      'Saved',
      expect.stringMatching(/^Saved; the service gave no size or checksum to verify it against/),
    ]);
    // Saved before the core kept its checks: plain "Saved", no claim either way.
    expect(tag('older')).toEqual(['Saved', expect.stringMatching(/^Saved · /)]);
    expect(tag('panel · Web client upload')).toEqual(['Saved', expect.stringMatching(/^Uploaded whole/)]);
    // Shorter than the webhook announced (issue 31): never Verified, and says how much of what.
    expect(tag('morning-show')).toEqual([
      'Shorter than announced',
      expect.stringMatching(/^Saved shorter than announced \(1\.6 MB of 3\.1 MB\): the server never sent the rest\./),
    ]);
  });

  it('reads like a studio day: each broadcast, then the web client’s recordings made in it, by stream', async () => {
    const { container } = setupWithContainer(
      [
        recording({
          key: 'rr',
          channelId: 'keynote',
          source: 'client',
          track: 'remote',
          state: 'saved',
          receivedAt: inMinutes(-1),
        }),
        recording({
          key: 'll',
          channelId: 'keynote',
          source: 'client',
          track: 'local',
          state: 'saved',
          receivedAt: inMinutes(-2),
        }),
        recording({
          key: 'panel',
          channelId: 'panel',
          state: 'saved',
          fileName: 'panel.mp4',
          receivedAt: inMinutes(-3),
        }),
        recording({
          key: 'key',
          channelId: 'keynote',
          state: 'saved',
          fileName: 'keynote.mp4',
          receivedAt: inMinutes(-9),
        }),
        recording({
          key: 'lone',
          channelId: 'lost',
          source: 'client',
          track: 'local',
          state: 'saved',
          receivedAt: inMinutes(-4),
        }),
      ],
      new TestBridge(),
    );
    await screen.findByText(/^keynote · /);
    const titles = [...container.querySelectorAll('.entry .id')].map((e) => e.textContent?.replace(/ · \d.*$/, ''));
    expect(titles).toEqual(['panel', 'lost · Local stream', 'keynote', 'Local stream', 'Remote stream']);
    const nested = [...container.querySelectorAll('.entry.nested .id')].map((e) => e.textContent);
    expect(nested).toHaveLength(2);
    // The badge says "Web client" once; the title no longer repeats it.
    expect(screen.getAllByText('Web client', { selector: '.badge' })).toHaveLength(3);
    expect(screen.queryByText(/^Web client ·/)).toBeNull();
  });

  it('shows the webhook’s thumbnail the core fetched, and never a URL the page would load itself', async () => {
    const bridge = new TestBridge();
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    bridge.handle('recordings:thumbnail', (key) => ({ dataUrl: key === 't1' ? png : 'https://tracker.example/x.png' }));
    const { container } = setupWithContainer(
      [
        recording({ key: 't1', channelId: 'pic-1', state: 'saved', fileName: 'pic-1.mp4', hasThumbnail: true }),
        recording({ key: 't2', channelId: 'pic-2', state: 'saved', fileName: 'pic-2.mp4', hasThumbnail: true }),
        recording({ key: 't3', channelId: 'pic-3', state: 'saved', fileName: 'pic-3.mp4' }),
      ],
      bridge,
    );
    await waitFor(() => expect(container.querySelectorAll('img')).toHaveLength(1));
    expect(container.querySelector('img')?.getAttribute('src')).toBe(png);
    expect(bridge.callsOf('recordings:thumbnail').flat().sort()).toEqual(['t1', 't2']);
  });

  it('has no Open or Reveal where files cannot be shown, says why, and still has Copy path', async () => {
    setup([recording({ key: 'k9', state: 'saved', fileName: 'show-9.mp4' })], { fileActions: false });
    expect(await screen.findByText(/show-9\.mp4/)).toBeInTheDocument();
    expect(screen.getByText(/Open and Show in folder need the tray app/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Open/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /in folder/ })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: /^Copy path of / })).toBeInTheDocument();
  });

  it('groups by day, filters by source and problems, and pages a long list', async () => {
    const day = 86_400_000;
    const list = [
      recording({
        key: 'old',
        channelId: 'old-show',
        state: 'saved',
        receivedAt: new Date(NOW - 3 * day).toISOString(),
      }),
      recording({ key: 'y1', channelId: 'late-show', state: 'failed', receivedAt: new Date(NOW - day).toISOString() }),
      recording({ key: 'c1', channelId: '', source: 'client', state: 'saved', receivedAt: inMinutes(-5) }),
      ...Array.from({ length: 60 }, (_, i) =>
        recording({ key: `t${i}`, channelId: `today-${i}`, state: 'saved', receivedAt: inMinutes(-10 - i) }),
      ),
    ];
    const { user } = setup(list);
    const headings = async () => (await screen.findAllByRole('heading', { level: 2 })).map((h) => h.textContent);
    // 50 shown at first: all from today (the upload and 49 broadcasts).
    expect(await headings()).toEqual(['Today']);
    expect(within(section('Today')).getAllByRole('listitem')).toHaveLength(50);
    expect(within(section('Today')).getByText(/^Web client upload · /)).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Show 13 more' }));
    expect(await headings()).toEqual(['Today', 'Yesterday', expect.stringMatching(/\w+day, May 11/)]);
    expect(screen.queryByRole('button', { name: /Show \d+ more/ })).not.toBeInTheDocument();

    await user.click(screen.getByRole('radio', { name: /^Problems/ }));
    expect(await headings()).toEqual(['Yesterday']);
    expect(within(section('Yesterday')).getByText(/^late-show · /)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /^Retry download of late-show/ })).toBeInTheDocument();

    await user.click(screen.getByRole('radio', { name: /^Web client/ }));
    expect(within(section('Today')).getAllByRole('listitem')).toHaveLength(1);
    expect(screen.getByRole('radio', { name: 'Broadcasts 62' })).not.toBeChecked();
  });

  it('lists failures with their reason and retries them', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:retry', (key) =>
      recording({ key, channelId: 'show-3', state: 'pending', deadline: inMinutes(90) }),
    );
    const { user } = setup(
      [
        recording({ key: 'k3', channelId: 'show-3', state: 'failed', error: 'HTTP 403 from the download host' }),
        recording({ key: 'k4', channelId: 'show-4', state: 'expired', error: null, source: 'client' }),
      ],
      { bridge },
    );
    const failed = await screen.findByRole('region', { name: 'Today' });
    expect(within(failed).getByText('HTTP 403 from the download host')).toBeInTheDocument();
    expect(within(failed).getByText('The service deleted the file before it could be downloaded.')).toBeInTheDocument();
    expect(within(failed).getByText('Web client')).toBeInTheDocument();
    expect(within(failed).getByText('Failed')).toBeInTheDocument();
    expect(within(failed).getByText('Expired')).toBeInTheDocument();
    // An expired one may still be tried: the service may keep a file past its deadline, and trying costs nothing.
    expect(
      within(failed)
        .getAllByRole('button', { name: /^Retry/ })
        .map((b) => b.textContent),
    ).toEqual(['Retry now', 'Retry now']);

    await user.click(within(failed).getByRole('button', { name: /^Retry download of show-3 · / }));
    expect(bridge.callsOf('recordings:retry')).toEqual([['k3']]);
    expect(await screen.findByRole('progressbar', { name: 'Download of show-3' })).toBeInTheDocument();
  });

  it('shows a failed retry beside the recording', async () => {
    const bridge = new TestBridge().fail('recordings:retry', 'expired', 'The file is gone.');
    const { user } = setup([recording({ key: 'k3', channelId: 'show-3', state: 'failed' })], { bridge });
    await user.click(await screen.findByRole('button', { name: /^Retry download of show-3/ }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The file is gone.');
  });

  it('reports channels whose recording may have been missed, and updates from events', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:gaps', () =>
      gapReport({ since: '2024-05-13T20:00:00Z', missing: [{ channelId: 'gone-1', endedAt: '2024-05-14T01:00:00Z' }] }),
    );
    setup([recording({ key: 'k', state: 'saved', fileName: 'a.mp4' })], { bridge });

    const missed = await screen.findByRole('region', { name: 'Possibly missed' });
    expect(within(missed).getByText('gone-1')).toBeInTheDocument();
    expect(within(missed).getByText(/ended while Tally was not running/)).toBeInTheDocument();

    bridge.emit('recordings:gaps', gapReport({ missing: [{ channelId: 'gone-2', endedAt: '2024-05-14T02:00:00Z' }] }));
    await waitFor(() => expect(within(section('Possibly missed')).getByText('gone-2')).toBeInTheDocument());
    expect(screen.queryByText('gone-1')).not.toBeInTheDocument();
  });

  it('lists a recording expected but not received under its own heading, not as missed while Tally was off', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:gaps', () =>
      gapReport({
        since: '2024-05-13T20:00:00Z',
        missing: [
          { channelId: 'closed-live', endedAt: '2024-05-14T11:40:00Z', live: true },
          { channelId: 'gone-1', endedAt: '2024-05-14T01:00:00Z' },
        ],
      }),
    );
    setup([recording({ key: 'k', state: 'saved', fileName: 'a.mp4' })], { bridge });

    const expected = await screen.findByRole('region', { name: 'Expected, not received' });
    expect(within(expected).getByText('closed-live')).toBeInTheDocument();
    expect(within(expected).getByText(/closed while Tally was running, but no recording arrived/)).toBeInTheDocument();
    expect(within(expected).queryByText(/not running/)).not.toBeInTheDocument();
    expect(within(expected).queryByText('gone-1')).not.toBeInTheDocument();
    const missed = section('Possibly missed');
    expect(within(missed).getByText('gone-1')).toBeInTheDocument();
    expect(within(missed).queryByText('closed-live')).not.toBeInTheDocument();

    // Only a live finding: no "ended while Tally was not running" section at all.
    bridge.emit(
      'recordings:gaps',
      gapReport({ missing: [{ channelId: 'closed-2', endedAt: '2024-05-14T11:50:00Z', live: true }] }),
    );
    await waitFor(() => expect(within(section('Expected, not received')).getByText('closed-2')).toBeInTheDocument());
    expect(screen.queryByRole('region', { name: 'Possibly missed' })).not.toBeInTheDocument();
    expect(screen.queryByText(/ended while Tally was not running/)).not.toBeInTheDocument();
  });

  it('says the same in Korean', async () => {
    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    const bridge = new TestBridge();
    bridge.handle('recordings:gaps', () =>
      gapReport({ missing: [{ channelId: 'closed-live', endedAt: '2024-05-14T11:40:00Z', live: true }] }),
    );
    setup([], { bridge });
    const expected = await screen.findByRole('region', { name: '받지 못한 녹화' });
    expect(within(expected).getByText(/Tally가 실행 중일 때 종료된 채널이지만/)).toBeInTheDocument();
    expect(within(expected).getByText('closed-live')).toBeInTheDocument();
  });

  it('gives the core’s reasons in Korean: expired, retrying and a failed gap check', async () => {
    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    const gone = [note('recordingGone', { at: '14:03' }), note('partialKept', { size: '12 MB', path: '/rec/a.part' })];
    const retry = [note('saveFailed', { detail: 'ECONNRESET socket hang up' })];
    const bridge = new TestBridge();
    bridge.handle('recordings:gaps', () =>
      gapReport({
        error: 'The service did not answer.',
        errorNotes: [note('error', { errorCode: 'timeout', message: 'x' })],
      }),
    );
    setup(
      [
        recording({ key: 'k1', channelId: 'show-1', state: 'expired', error: notesText(gone), errorNotes: gone }),
        recording({
          key: 'k2',
          channelId: 'show-2',
          state: 'pending',
          error: notesText(retry),
          errorNotes: retry,
          attempts: 2,
        }),
      ],
      { bridge },
    );
    expect(
      await screen.findByText(
        /방송이 끝나고 6시간이 지나 서비스에서 녹화를 삭제했습니다\(14:03\)\. 일부만 받은 사본\(12 MB\)을 \/rec\/a\.part에 남겨 두었습니다\./,
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByText(/다시 시도할 예정: 녹화를 저장하지 못했습니다: ECONNRESET socket hang up/),
    ).toBeInTheDocument();
    expect(
      await screen.findByText(/누락된 녹화를 확인하지 못했습니다: 서비스가 제때 응답하지 않았습니다/),
    ).toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(/The service deleted|Could not save|did not answer/);
  });

  it('explains where recordings come from and the webhook status when there are none', async () => {
    setup([], {
      tunnel: tunnelStatus({ state: 'reachable', publicUrl: 'https://abc.example.dev/webhook/t0k', registered: false }),
    });
    expect(await screen.findByText('No recordings yet')).toBeInTheDocument();
    expect(screen.getByText(/sends its recording to Tally’s webhook/)).toBeInTheDocument();
    expect(screen.getByText('Webhook URL: https://abc.example.dev/webhook/t0k')).toBeInTheDocument();
    expect(screen.getByText(/Not registered with the service yet/)).toBeInTheDocument();
  });

  it('says so when there is no public webhook URL yet', async () => {
    setup([], { tunnel: tunnelStatus() });
    expect(await screen.findByText(/No public webhook URL yet/)).toBeInTheDocument();
  });

  it('in demo mode, says the sandbox sends its recordings directly instead of asking for a tunnel', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:list', () => []);
    const store = new RecordingsStore(bridge.bridge, new ManualClock(NOW));
    onTestFinished(store.start());
    render(RecordingsView, { store, fileActions: false, tunnel: tunnelStatus(), demo: true });
    expect(await screen.findByText(/sandbox sends its recordings straight to Tally/)).toBeInTheDocument();
    expect(screen.queryByText(/Set up a tunnel/)).not.toBeInTheDocument();
  });

  it('counts under Problems every recording that waits on an error, failed, expired, was refused or is gone', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:retry', (key) =>
      recording({ key, channelId: 'stuck', state: 'downloading', bytes: 1, totalBytes: 10, deadline: inMinutes(300) }),
    );
    const { user, clock } = setup(
      [
        recording({
          key: 'w',
          channelId: 'stuck',
          state: 'downloading',
          bytes: 30,
          totalBytes: 100,
          error: 'EEXIST: the recordings folder is a file',
          deadline: inMinutes(300),
          nextAttemptAt: inMinutes(2),
        }),
        recording({ key: 'f', channelId: 'failed-show', state: 'failed', error: 'HTTP 500' }),
        recording({ key: 'e', channelId: 'expired-show', state: 'expired' }),
        recording({ key: 'r', channelId: '', source: 'client', state: 'refused', error: 'Not an allowed origin' }),
        recording({ key: 'g', channelId: 'gone-show', state: 'gone', deadline: inMinutes(358) }),
        recording({ key: 's', channelId: 'fine-show', state: 'saved', fileName: 'fine.mp4' }),
        recording({ key: 'p', channelId: 'queued-show', state: 'pending', deadline: inMinutes(300) }),
      ],
      { bridge },
    );
    expect(await screen.findByRole('radio', { name: 'Problems 5' })).toBeInTheDocument();

    // The waiting download says why and can be tried again at once from its progress row.
    const progress = screen.getByRole('progressbar', { name: 'Download of stuck' }).closest('li')!;
    expect(progress).toHaveTextContent('Will try again: EEXIST: the recordings folder is a file · next try in 2m');
    clock.advance(3 * 60_000);
    await waitFor(() => expect(progress).toHaveTextContent('· trying again now'));
    const queued = screen.getByRole('progressbar', { name: 'Download of queued-show' }).closest('li')!;
    expect(within(queued).queryByRole('button', { name: /^Retry/ })).not.toBeInTheDocument();

    await user.click(screen.getByRole('radio', { name: /^Problems/ }));
    const today = section('Today');
    const names = within(today)
      .getAllByRole('listitem')
      .map((li) => li.querySelector('.id')?.textContent?.split(' · ')[0]);
    expect(names.sort()).toEqual(['Web client upload', 'expired-show', 'failed-show', 'gone-show', 'stuck']);
    // Retry now on each that can be tried again (a refused upload cannot: the web page was told).
    const retries = within(today).getAllByRole('button', { name: /^Retry download of/ });
    expect(retries.map((b) => b.getAttribute('aria-label')?.split(' · ')[0])).toEqual(
      expect.arrayContaining([
        'Retry download of stuck',
        'Retry download of failed-show',
        'Retry download of expired-show',
        'Retry download of gone-show',
      ]),
    );
    expect(retries.every((b) => b.textContent === 'Retry now')).toBe(true);
    // Each failing recording is listed once: the waiting one is under Problems, not in progress as well.
    expect(screen.getAllByRole('button', { name: /^Retry download of stuck/ })).toHaveLength(1);
    expect(screen.queryByRole('progressbar', { name: 'Download of stuck' })).not.toBeInTheDocument();
    expect(screen.getByRole('progressbar', { name: 'Download of queued-show' })).toBeInTheDocument();

    await user.click(within(today).getByRole('button', { name: /^Retry download of stuck/ }));
    expect(bridge.callsOf('recordings:retry')).toEqual([['w']]);
    await waitFor(() => expect(screen.getByRole('radio', { name: 'Problems 4' })).toBeInTheDocument());
  });

  it('shows a recording the service no longer has as gone, with its reason and never a countdown', async () => {
    const reason = notesText([note('recordingGoneNow', { status: 404, detail: 'NoSuchKey' })]);
    setup([
      recording({
        key: 'g',
        channelId: 'gone-show',
        state: 'gone',
        error: reason,
        errorNotes: [note('recordingGoneNow', { status: 404, detail: 'NoSuchKey' })],
        deadline: inMinutes(358),
        nextAttemptAt: inMinutes(10),
      }),
    ]);
    const today = await screen.findByRole('region', { name: 'Today' });
    const item = within(today).getByRole('listitem');
    expect(within(item).getByText('Gone from the service')).toBeInTheDocument();
    expect(item).toHaveTextContent('The service does not have this recording (404 NoSuchKey)');
    expect(within(item).getByRole('button', { name: /^Retry download of gone-show/ })).toHaveTextContent('Retry now');
    expect(screen.queryByText(/Expires in/)).not.toBeInTheDocument();
    expect(screen.queryByRole('progressbar')).not.toBeInTheDocument();
  });

  it('offers Retry now in the wide detail pane for a gone or failed recording, without a deletion time for gone', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:list', () => [
      recording({
        key: 'g',
        channelId: 'gone-show',
        state: 'gone',
        deadline: inMinutes(358),
        receivedAt: inMinutes(-1),
      }),
      recording({ key: 'f', channelId: 'failed-show', state: 'failed', error: 'HTTP 500', receivedAt: inMinutes(-2) }),
    ]);
    bridge.handle('recordings:retry', (key) => recording({ key, channelId: 'gone-show', state: 'pending' }));
    const store = new RecordingsStore(bridge.bridge, new ManualClock(NOW));
    onTestFinished(store.start());
    render(RecordingsView, { store, fileActions: true, tunnel: null, wide: true });
    const pane = await screen.findByRole('complementary', { name: 'Selected recording' });
    await waitFor(() => expect(within(pane).getByText('Gone from the service')).toBeInTheDocument());
    expect(within(pane).queryByText('The service deletes it')).not.toBeInTheDocument();
    expect(within(pane).getByText(/no longer has this recording/)).toBeInTheDocument();
    const user = userEvent.setup({ delay: null });
    await user.click(within(pane).getByRole('button', { name: /^Retry download of gone-show/ }));
    expect(bridge.callsOf('recordings:retry')).toEqual([['g']]);

    await user.click(screen.getByRole('button', { name: /^Show failed-show/ }));
    expect(within(pane).getByRole('button', { name: /^Retry download of failed-show/ })).toHaveTextContent('Retry now');
  });

  it('says "Registered" in green only while the public URL reaches this receiver', async () => {
    const bridge = new TestBridge();
    bridge.handle('recordings:list', () => []);
    const store = new RecordingsStore(bridge.bridge, new ManualClock(NOW));
    onTestFinished(store.start());
    bridge.health = healthView();
    const health = new HealthStore(bridge.bridge);
    onTestFinished(health.start());
    const tunnel = tunnelStatus({
      state: 'reachable',
      publicUrl: 'https://tally.example.com/hooks/x',
      registered: true,
    });
    render(RecordingsView, { store, fileActions: true, tunnel, health });
    const ok = await screen.findByText('Registered with the service');
    await waitFor(() => expect(ok).toHaveClass('ok'));

    const broken = healthView();
    broken.components = broken.components.map((c) =>
      c.id === 'publicPath' ? { ...c, state: 'error', reason: 'The public URL does not reach this receiver: 502' } : c,
    );
    bridge.emit('health:changed', { ...broken, state: 'error' });
    const warn = await screen.findByText('Registered, but the public URL does not reach Tally right now.');
    expect(warn).not.toHaveClass('ok');
    expect(screen.queryByText('Registered with the service')).not.toBeInTheDocument();
  });
});
