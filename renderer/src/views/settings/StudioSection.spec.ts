import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TestBridge } from '../../../testing/bridge.js';
import { setLocale } from '../../lib/i18n.js';
import { StudioStore } from '../../stores/studio.svelte.js';
import StudioMembers from '../recordings/StudioMembers.svelte';
import StudioRecordings from '../recordings/StudioRecordings.svelte';
import StudioSection from './StudioSection.svelte';

function setup(bridge = new TestBridge()) {
  const studio = new StudioStore(bridge.bridge);
  onTestFinished(studio.start());
  render(StudioSection, { studio });
  return { bridge, studio, user: userEvent.setup({ delay: null }) };
}

describe('Settings → Studio', () => {
  it('follows a studio: saves mode, URL and name through the contract, and Test reports the answer', async () => {
    const { bridge, user } = setup();
    await user.click(await screen.findByRole('radio', { name: /Follows a studio/ }));
    const url = screen.getByRole('textbox', { name: 'Team servers' });
    const save = screen.getByRole('button', { name: 'Save studio settings' });
    await user.type(url, 'http://wrong');
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(save).toBeDisabled();
    await user.clear(url);
    await user.type(url, 'nats://studio.local:4222');
    await user.type(screen.getByRole('textbox', { name: 'Name of this computer in the studio' }), 'edit-bay');
    await user.click(save);
    await waitFor(() =>
      expect(bridge.callsOf('studio:set')).toEqual([
        [{ mode: 'follow', url: 'nats://studio.local:4222', name: 'edit-bay' }],
      ]),
    );
    await user.click(screen.getByRole('button', { name: 'Test' }));
    expect(await screen.findByText(/The team server answered/)).toBeInTheDocument();
    expect(bridge.callsOf('studio:test')).toEqual([['nats://studio.local:4222']]);
  });

  it('as the receiver, shows how long the team keeps recordings and saves a new retention', async () => {
    const bridge = new TestBridge();
    bridge.studio = { ...bridge.studio, mode: 'receiver', url: 'nats://studio.local:4222', retentionDays: 7 };
    const { user } = setup(bridge);
    const days = await screen.findByRole('spinbutton', { name: 'Keep on the team server (days)' });
    expect(days).toHaveValue(7);
    expect(days).toHaveAccessibleDescription(/a member away for longer misses it/);
    const save = screen.getByRole('button', { name: 'Save studio settings' });
    await user.clear(days);
    await user.type(days, '400');
    expect(save).toBeDisabled();
    await user.clear(days);
    await user.type(days, '14');
    await user.click(save);
    await waitFor(() =>
      expect(bridge.callsOf('studio:set')).toEqual([
        [{ mode: 'receiver', url: 'nats://studio.local:4222', name: null, retentionDays: 14, replicas: null }],
      ]),
    );
    // A member does not decide how long the team keeps anything: no such field.
    await user.click(screen.getByRole('radio', { name: /Follows a studio/ }));
    expect(screen.queryByRole('spinbutton', { name: /Keep on the team server/ })).toBeNull();
  });

  it('takes a cluster: comma-separated servers, each checked with a message naming the field, and the replicas', async () => {
    const bridge = new TestBridge();
    bridge.studio = { ...bridge.studio, mode: 'receiver', url: 'nats://a.local:4222', replicas: null };
    const { user } = setup(bridge);
    const url = await screen.findByRole('textbox', { name: 'Team servers' });
    expect(url).toHaveAccessibleDescription(/separated by commas/);
    const replicas = screen.getByRole('combobox', { name: 'Copies on the team cluster' });
    expect(replicas).toHaveValue('');
    expect(screen.getByRole('option', { name: 'As the team server has them (1 when new)' })).toBeInTheDocument();
    const save = screen.getByRole('button', { name: 'Save studio settings' });

    await user.type(url, ', b.local:4222');
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(url).toHaveAccessibleDescription(
      /Team servers: “b.local:4222” is not nats:\/\/HOST:PORT or tls:\/\/HOST:PORT\./,
    );
    expect(save).toBeDisabled();
    await user.clear(url);
    await user.type(url, 'nats://a.local:4222, tls://b.local:4222');
    expect(url).toHaveAccessibleDescription(/Team servers: every server of a cluster takes the same scheme/);
    expect(save).toBeDisabled();

    await user.clear(url);
    await user.type(url, 'nats://a.local:4222, nats://b.local:4222,nats://c.local:4222');
    expect(url).toHaveAttribute('aria-invalid', 'false');
    await user.selectOptions(replicas, '3 servers');
    await user.click(save);
    await waitFor(() =>
      expect(bridge.callsOf('studio:set')).toEqual([
        [
          {
            mode: 'receiver',
            url: 'nats://a.local:4222, nats://b.local:4222,nats://c.local:4222',
            name: null,
            retentionDays: 7,
            replicas: 3,
          },
        ],
      ]),
    );
    // A member keeps what the receiver chose: no replicas field there.
    await user.click(screen.getByRole('radio', { name: /Follows a studio/ }));
    expect(screen.queryByRole('combobox', { name: 'Copies on the team cluster' })).toBeNull();

    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    const korean = await screen.findByRole('textbox', { name: '팀 서버' });
    await user.clear(korean);
    await user.type(korean, 'http://x');
    expect(
      await screen.findByText('팀 서버: “http://x”은(는) nats://호스트:포트 또는 tls://호스트:포트 형식이 아닙니다.'),
    ).toBeInTheDocument();
  });

  it('shows each member and how far it is behind on the receiver, the one near expiry as a warning', async () => {
    const bridge = new TestBridge();
    const hour = 3_600_000;
    const iso = (ms: number) => new Date(Date.now() + ms).toISOString();
    bridge.studio = { ...bridge.studio, mode: 'receiver', url: 'nats://studio.local:4222', members: [] };
    const studio = new StudioStore(bridge.bridge);
    onTestFinished(studio.start());
    render(StudioMembers, { studio });
    expect(await screen.findByText('No member follows the studio yet.')).toBeInTheDocument();

    bridge.emit('studio:changed', {
      ...bridge.studio,
      members: [
        {
          id: 'member-a',
          label: 'late-laptop on edit-1',
          pending: 3,
          oldestAt: iso(-150 * hour),
          expiresAt: iso(18 * hour),
          lagging: true,
        },
        {
          id: 'member-b',
          label: 'bay-2 on edit-2',
          pending: 1,
          oldestAt: iso(-2 * hour),
          expiresAt: iso(166 * hour),
          lagging: false,
        },
        { id: 'member-c', label: 'bay-3 on edit-3', pending: 0, oldestAt: null, expiresAt: null, lagging: false },
      ],
    });
    const items = await screen.findAllByRole('listitem');
    const text = items.map((li) => li.textContent?.replace(/\s+/g, ' ').trim());
    expect(text[0]).toMatch(
      /^late-laptop on edit-1 3 recordings waiting oldest shared 6d 6h ago leaves the team server in 1[78]h/,
    );
    expect(text[1]).toMatch(/^bay-2 on edit-2 1 recording waiting oldest shared 2h ago$/);
    expect(text[2]).toBe('bay-3 on edit-3 Up to date');
    expect(items[0]).toHaveClass('lagging');
    expect(items[1]).not.toHaveClass('lagging');
    expect(items[1]).not.toHaveTextContent(/leaves the team server/);

    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    expect(await screen.findByText('스튜디오 멤버')).toBeInTheDocument();
    expect(screen.getByText('대기 중인 녹화 3개')).toBeInTheDocument();
    expect(screen.getByText('최신 상태')).toBeInTheDocument();
    // A member's computer does not list the others.
    bridge.emit('studio:changed', { ...bridge.studio, mode: 'follow' });
    await waitFor(() => expect(screen.queryByText('스튜디오 멤버')).toBeNull());
  });

  it('keeps the team token write-only: sent once, field emptied, only the server shown back', async () => {
    const bridge = new TestBridge();
    bridge.studio = { ...bridge.studio, mode: 'follow', url: 'nats://studio.local:4222' };
    const { user } = setup(bridge);
    const secret = await screen.findByLabelText('Password or token');
    await user.type(secret, 'tok-123');
    await user.click(screen.getByRole('button', { name: 'Store in keychain' }));
    await waitFor(() =>
      expect(bridge.callsOf('studio:setCredentials')).toEqual([['nats://studio.local:4222', { token: 'tok-123' }]]),
    );
    expect(secret).toHaveValue('');
    expect(await screen.findByText('Credentials stored in the keychain for studio.local:4222.')).toBeInTheDocument();
    expect(document.body.textContent).not.toContain('tok-123');
  });

  it('shows the studio recordings on this computer with their state, in Korean too', async () => {
    const bridge = new TestBridge();
    bridge.studio = {
      ...bridge.studio,
      mode: 'follow',
      url: 'nats://studio.local:4222',
      status: { state: 'connected', message: null },
      recordings: [
        {
          identity: 'rec-a',
          channelId: 'cam-a',
          state: 'saved',
          bytes: 2048,
          totalBytes: 2048,
          fileName: 'cam-a.mp4',
          at: '2024-05-14T10:00:00Z',
        },
        {
          identity: 'rec-b',
          channelId: 'cam-b',
          state: 'mirroring',
          bytes: 512,
          totalBytes: 4096,
          fileName: null,
          at: '2024-05-14T11:00:00Z',
        },
        {
          identity: 'rec-c',
          channelId: 'cam-c',
          state: 'waiting',
          bytes: null,
          totalBytes: 8192,
          fileName: null,
          at: '2024-05-14T12:00:00Z',
        },
      ],
    };
    const studio = new StudioStore(bridge.bridge);
    onTestFinished(studio.start());
    render(StudioRecordings, { studio });
    const items = await screen.findAllByRole('listitem');
    expect(items.map((li) => li.textContent?.replace(/\s+/g, ' ').trim())).toEqual([
      // A member's waiting row is about this computer, not about sharing (the receiver's "Waiting to share").
      'cam-c On the team server, not copied here yet',
      expect.stringContaining('cam-b Copying here'),
      expect.stringContaining('cam-a.mp4 On this computer'),
    ]);
    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    expect(await screen.findByText('이 컴퓨터에 있음')).toBeInTheDocument();
    bridge.emit('studio:changed', { ...bridge.studio, mode: 'receiver' });
    setLocale('en');
    expect(await screen.findByText('Waiting to share')).toBeInTheDocument();
    bridge.emit('studio:changed', { ...bridge.studio, recordings: [] });
    await waitFor(() => expect(screen.queryAllByRole('listitem')).toHaveLength(0));
  });
});
