import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TestBridge } from '../../../testing/bridge.js';
import { setLocale } from '../../lib/i18n.js';
import { StudioStore } from '../../stores/studio.svelte.js';
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
    const url = screen.getByRole('textbox', { name: 'Team server' });
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
        [{ mode: 'receiver', url: 'nats://studio.local:4222', name: null, retentionDays: 14 }],
      ]),
    );
    // A member does not decide how long the team keeps anything: no such field.
    await user.click(screen.getByRole('radio', { name: /Follows a studio/ }));
    expect(screen.queryByRole('spinbutton', { name: /Keep on the team server/ })).toBeNull();
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
