import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import App from '../App.svelte';
import { setLocale } from '../lib/i18n.js';
import { ManualClock, TestBridge, healthView, settingsView } from '../../testing/bridge.js';
import type { ConnectionSource, ConnectionState } from '../lib/transport-ws.js';

const URL = 'nats://studio.local:4222';

/** The link to the core stays open for the whole spec. */
const open: ConnectionSource = { state: 'open' as ConnectionState, onState: () => () => {} };

/** The whole popover on a core whose first run is not done, in `language`, as the tray opens it. */
function setup(language: 'en' | 'ko') {
  const bridge = new TestBridge();
  bridge.settings = settingsView({ firstRunDone: false, language });
  render(App, { bridge: bridge.bridge, connection: open, clock: new ManualClock(), systemLanguage: 'en-US' });
  onTestFinished(() => setLocale('en'));
  return { bridge, user: userEvent.setup({ delay: null }) };
}

describe('first run: joining a studio', () => {
  it('asks only for the team server, tests it, checks the folder and ends following the studio', async () => {
    const { bridge, user } = setup('en');
    await user.click(await screen.findByRole('button', { name: 'I’m joining a studio' }));
    const heading = await screen.findByRole('heading', { name: 'Join your studio' });
    expect(heading).toHaveFocus();
    expect(screen.getByText('Step 1 of 2')).toBeInTheDocument();
    // A member has no service account: none of its fields, and the demo is still one click away.
    expect(screen.queryByLabelText('Service ID')).toBeNull();
    expect(screen.getByRole('button', { name: 'Try the demo first' })).toBeEnabled();

    const url = screen.getByRole('textbox', { name: 'Team servers' });
    const next = screen.getByRole('button', { name: 'Test and continue' });
    await user.type(url, 'studio.local:4222');
    expect(url).toHaveAttribute('aria-invalid', 'true');
    expect(next).toBeDisabled();
    await user.clear(url);
    await user.type(url, URL);

    // The server refuses the token: its reason is shown, the step stays and the field is emptied.
    bridge.handle('studio:test', () => ({ ok: false, message: 'The team server refused the credentials.' }));
    const secret = screen.getByLabelText('Password or token');
    await user.type(secret, 'wrong-token');
    await user.click(next);
    expect(await screen.findByRole('alert')).toHaveTextContent('The team server refused the credentials.');
    expect(secret).toHaveValue('');
    expect(screen.getByRole('heading', { name: 'Join your studio' })).toBeInTheDocument();
    // Refused credentials do not stay in the keychain.
    await waitFor(() => expect(bridge.callsOf('studio:clearCredentials')).toHaveLength(1));
    expect(bridge.studio.credentials).toBeNull();

    bridge.handle('studio:test', () => ({ ok: true, message: 'Connected; JetStream is on (1 streams).' }));
    await user.type(secret, 'team-token');
    await user.click(next);
    await screen.findByRole('heading', { name: 'Where recordings are saved' });
    expect(screen.getByText('Step 2 of 2')).toBeInTheDocument();
    expect(bridge.callsOf('studio:setCredentials')).toEqual([
      [URL, { token: 'wrong-token' }],
      [URL, { token: 'team-token' }],
    ]);
    expect(bridge.callsOf('studio:test')).toEqual([[URL], [URL]]);
    expect(bridge.callsOf('studio:clearCredentials')).toHaveLength(1);
    expect(bridge.studio.credentials).toEqual({ server: 'studio.local:4222', kind: 'token' });
    // Nothing is followed before the folder is checked.
    expect(bridge.callsOf('studio:set')).toEqual([]);

    const folder = screen.getByRole('textbox', { name: 'Folder path' });
    await user.clear(folder);
    await user.type(folder, '/home/me/Studio');
    await user.click(screen.getByRole('button', { name: 'Check and use this folder' }));
    await screen.findByRole('heading', { name: 'Waiting for the studio’s recordings' });
    // Waiting is where the guide ends, not a step of it.
    expect(screen.queryByText(/^Step \d of/)).toBeNull();
    expect(bridge.callsOf('settings:checkFolder')).toEqual([['/home/me/Studio']]);
    expect(bridge.callsOf('studio:set')).toEqual([[{ mode: 'follow', url: URL, name: null }]]);
    expect(bridge.settings.recordingsFolder).toBe('/home/me/Studio');

    // The follower's state, as the core pushes it: connected, then the first mirrored recording.
    bridge.emit('studio:changed', { ...bridge.studio, status: { state: 'connected', message: null } });
    expect(await screen.findByText(/a checked copy arrives in your folder/)).toBeInTheDocument();
    expect(screen.getByText('Connected to the team server')).toBeInTheDocument();
    bridge.emit('studio:changed', {
      ...bridge.studio,
      status: { state: 'connected', message: null },
      recordings: [
        {
          identity: 'rec-a',
          channelId: 'cam-a',
          state: 'saved',
          bytes: 10,
          totalBytes: 10,
          fileName: 'cam-a.mp4',
          at: '2024-05-14T12:00:00Z',
        },
      ],
    });
    await screen.findByRole('heading', { name: 'A studio recording is here' });
    expect(screen.getByText('cam-a.mp4 is in your recordings folder.')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Open Tally' }));
    await screen.findByRole('tab', { name: 'Live' });
    expect(bridge.callsOf('settings:update').at(-1)).toEqual([{ firstRunDone: true }]);
    expect(bridge.callsOf('credentials:set')).toEqual([]);
    expect(document.body.textContent).not.toContain('team-token');
  });

  it('in Korean: a user and password pair, and the demo one click away from any step', async () => {
    const { bridge, user } = setup('ko');
    await user.click(await screen.findByRole('button', { name: '스튜디오에 합류하기' }));
    await screen.findByRole('heading', { name: '스튜디오에 합류' });
    await user.type(screen.getByRole('textbox', { name: '팀 서버' }), URL);
    await user.type(screen.getByRole('textbox', { name: '사용자 (토큰이면 비워 두기)' }), 'edit-bay');
    await user.type(screen.getByLabelText('비밀번호 또는 토큰'), 'pw-1');
    await user.click(screen.getByRole('button', { name: '테스트 후 계속' }));
    await screen.findByRole('heading', { name: '녹화 저장 위치' });
    expect(bridge.callsOf('studio:setCredentials')).toEqual([[URL, { user: 'edit-bay', password: 'pw-1' }]]);

    await user.click(screen.getByRole('button', { name: '확인하고 이 폴더 사용' }));
    await screen.findByRole('heading', { name: '스튜디오 녹화를 기다리는 중' });
    expect(screen.getByText('스튜디오 모드가 꺼져 있습니다.')).toBeInTheDocument();
    bridge.emit('studio:changed', { ...bridge.studio, status: { state: 'connecting', message: null } });
    expect(await screen.findByText('팀 서버에 연결하는 중…')).toBeInTheDocument();
    bridge.emit('studio:changed', { ...bridge.studio, status: { state: 'connected', message: null } });
    expect(await screen.findByText(/확인된 사본이 내 폴더에 도착합니다/)).toBeInTheDocument();
  });

  it('leaves for the demo from the team step without storing anything', async () => {
    const { bridge, user } = setup('en');
    await user.click(await screen.findByRole('button', { name: 'I’m joining a studio' }));
    await screen.findByRole('heading', { name: 'Join your studio' });
    await user.click(screen.getByRole('button', { name: 'Try the demo first' }));
    await screen.findByRole('tab', { name: 'Live' });
    await waitFor(() => expect(bridge.callsOf('settings:update')).toEqual([[{ firstRunDone: true, demoMode: true }]]));
    expect(bridge.callsOf('studio:setCredentials')).toEqual([]);
    expect(bridge.callsOf('studio:set')).toEqual([]);
  });

  it('"Finish later" after a successful test keeps the tested servers (not followed until a folder is checked)', async () => {
    const { bridge, user } = setup('en');
    await user.click(await screen.findByRole('button', { name: 'I’m joining a studio' }));
    await user.type(await screen.findByRole('textbox', { name: 'Team servers' }), URL);
    await user.click(screen.getByRole('button', { name: 'Test and continue' }));
    await screen.findByRole('heading', { name: 'Where recordings are saved' });
    await user.click(screen.getByRole('button', { name: 'Finish later in Settings' }));
    await screen.findByRole('tab', { name: 'Live' });
    expect(bridge.callsOf('studio:set')).toEqual([[{ mode: 'off', url: URL, name: null }]]);
    expect(bridge.studio).toMatchObject({ mode: 'off', url: URL });
    expect(bridge.callsOf('settings:update')).toEqual([[{ firstRunDone: true }]]);
  });
});

describe('first run: the producer’s own service', () => {
  it('counts its three steps, offers the real recordings folder (not the demo’s) and checks the connection only with something to check', async () => {
    const bridge = new TestBridge();
    // In demo mode the folder in use is the demo's own; the guide offers where real recordings go.
    bridge.settings = settingsView({
      firstRunDone: false,
      recordingsFolder: '/home/me/.config/Tally/demo-recordings',
      ownRecordingsFolder: '/home/me/Videos/Tally',
    });
    render(App, { bridge: bridge.bridge, connection: open, clock: new ManualClock(), systemLanguage: 'en-US' });
    const user = userEvent.setup({ delay: null });
    await user.click(await screen.findByRole('button', { name: 'Set up with my service' }));
    expect(screen.getByText('Step 1 of 3')).toBeInTheDocument();
    await user.type(screen.getByLabelText('Service ID'), 'my-service');
    await user.type(screen.getByLabelText('Secret'), 's3cret');
    await user.click(screen.getByRole('button', { name: 'Test and save' }));
    await screen.findByRole('heading', { name: 'Where recordings are saved' });
    expect(screen.getByText('Step 2 of 3')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Folder path' })).toHaveValue('/home/me/Videos/Tally');

    // The core answers with the absolute folder it checked: the field shows it.
    bridge.handle('settings:checkFolder', () => ({ ok: true, message: null, path: '/home/me/Shows' }));
    await user.clear(screen.getByRole('textbox', { name: 'Folder path' }));
    await user.type(screen.getByRole('textbox', { name: 'Folder path' }), '~/Shows');
    await user.click(screen.getByRole('button', { name: 'Check and use this folder' }));
    await screen.findByRole('heading', { name: 'How the service reaches Tally' });
    expect(bridge.settings.recordingsFolder).toBe('/home/me/Shows');
    expect(screen.getByText('Step 3 of 3')).toBeInTheDocument();

    // ngrok without an authtoken: nothing to check yet, so the check waits for one.
    const check = screen.getByRole('button', { name: 'Check the connection' });
    await user.click(screen.getByRole('radio', { name: 'ngrok' }));
    expect(check).toBeDisabled();
    await user.type(screen.getByLabelText('ngrok authtoken'), 'token-123');
    expect(check).toBeEnabled();
    await user.click(screen.getByRole('radio', { name: 'My own public URL' }));
    expect(check).toBeDisabled();
  });
});

describe('first run: credentials already in the environment', () => {
  it('uses TALLY_SERVICE_ID / TALLY_SECRET as they are: tested, never asked for, nothing stored', async () => {
    const bridge = new TestBridge();
    bridge.settings = settingsView({ firstRunDone: false });
    bridge.credentials = { ...bridge.credentials, configured: true, serviceId: 'env-service', source: 'env' };
    render(App, { bridge: bridge.bridge, connection: open, clock: new ManualClock(), systemLanguage: 'en-US' });
    const user = userEvent.setup({ delay: null });
    await user.click(await screen.findByRole('button', { name: 'Set up with my service' }));
    expect(
      await screen.findByText(/TALLY_SERVICE_ID and TALLY_SECRET are set .*\(service ID env-service\)/),
    ).toBeVisible();
    expect(screen.queryByLabelText('Secret')).toBeNull();

    // A refused pair says why and stays on the step.
    bridge.handle('credentials:test', () => ({ ok: false, message: 'The service refused the secret.' }));
    await user.click(screen.getByRole('button', { name: 'Test and continue' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The service refused the secret.');

    bridge.handle('credentials:test', () => ({ ok: true, message: 'Connected to the service.' }));
    await user.click(screen.getByRole('button', { name: 'Test and continue' }));
    await screen.findByRole('heading', { name: 'Where recordings are saved' });
    expect(bridge.callsOf('credentials:test')).toEqual([[], []]);
    expect(bridge.callsOf('credentials:set')).toEqual([]);
  });
});

describe('first run: the own-URL step', () => {
  it('says which local address the reverse proxy must forward to, from the core’s receiver', async () => {
    const { bridge, user } = setup('en');
    bridge.health = healthView({
      receiver: { host: '127.0.0.1', port: null, configuredPort: 8787, portFollows: false },
    });
    await user.click(await screen.findByRole('button', { name: 'Set up with my service' }));
    await user.type(await screen.findByLabelText('Service ID'), 'svc-1');
    await user.type(screen.getByLabelText('Secret'), 's3cret');
    await user.click(screen.getByRole('button', { name: 'Test and save' }));
    await user.click(await screen.findByRole('button', { name: 'Check and use this folder' }));
    await screen.findByRole('heading', { name: 'How the service reaches Tally' });
    expect(screen.getByRole('radio', { name: 'My own public URL' })).toBeChecked();
    expect(screen.getByText('Forward to 127.0.0.1:8787')).toBeInTheDocument();

    bridge.emit(
      'health:changed',
      healthView({ receiver: { host: '127.0.0.1', port: 9000, configuredPort: 9000, portFollows: false } }),
    );
    await waitFor(() => expect(screen.getByText('Forward to 127.0.0.1:9000')).toBeInTheDocument());
  });
});
