import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TestBridge, credentialsStatus, healthView, settingsView, tunnelStatus } from '../../testing/bridge.js';
import { HealthStore } from '../stores/health.svelte.js';
import { errorNote, nested, note, noteText, notesText, RemoteError, type Note } from '../../../electron/contract.js';
import { setLocale } from '../lib/i18n.js';
import { SettingsStore } from '../stores/settings.svelte.js';
import { StudioStore } from '../stores/studio.svelte.js';
import SettingsView from './SettingsView.svelte';

function setup(bridge = new TestBridge(), native = true) {
  const store = new SettingsStore(bridge.bridge);
  onTestFinished(store.start());
  render(SettingsView, { store, native });
  return { bridge, store, user: userEvent.setup({ delay: null }) };
}

/** A coded core message as the core sends it: the English text beside its notes. */
function said<F extends 'message' | 'uploadsMessage'>(field: F, notes: Note[]) {
  const notesField = field === 'message' ? 'messageNotes' : 'uploadsNotes';
  return { [field]: notesText(notes), [notesField]: notes } as Record<F, string> & Record<string, Note[]>;
}

/** Replaces a text field's value and commits it the way a user does (typing, then leaving the field). */
async function replace(user: ReturnType<typeof userEvent.setup>, field: HTMLElement, value: string) {
  await user.clear(field);
  if (value) await user.type(field, value);
  await user.tab();
}

describe('SettingsView', () => {
  it('on a studio member, turns automatic registration off and says the receiver registers', async () => {
    const bridge = new TestBridge();
    bridge.settings = settingsView({ autoRegisterWebhook: true });
    bridge.studio = { ...bridge.studio, mode: 'follow', url: 'nats://studio.local:4222' };
    const store = new SettingsStore(bridge.bridge);
    const studio = new StudioStore(bridge.bridge);
    onTestFinished(store.start());
    onTestFinished(studio.start());
    render(SettingsView, { store, native: true, studio });
    const box = await screen.findByRole('checkbox', { name: 'Register automatically when the URL changes' });
    await waitFor(() => expect(box).toBeDisabled());
    expect(box).not.toBeChecked();
    expect(box).toHaveAccessibleDescription(/follows a studio: the studio's receiver registers the webhook URL/);
  });

  it('saves each change with exactly the patch for that field', async () => {
    const { bridge, user } = setup();
    await user.click(await screen.findByText('Advanced'));

    await replace(user, screen.getByRole('spinbutton', { name: 'Live refresh (seconds)' }), '10');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Connection' }), 'ngrok');
    await user.click(screen.getByRole('checkbox', { name: 'Open Tally at login' }));
    await user.click(screen.getByRole('checkbox', { name: 'A recording fails, expires, is refused or never arrives' }));
    await replace(user, screen.getByRole('textbox', { name: 'Console API URL' }), 'https://console.example.com');

    await waitFor(() => expect(bridge.callsOf('settings:update')).toHaveLength(5));
    expect(bridge.callsOf('settings:update')).toEqual([
      [{ pollIntervalSec: 10 }],
      [{ tunnel: { provider: 'ngrok' } }],
      [{ launchAtLogin: true }],
      [{ notifications: { failed: false } }],
      [{ endpoints: { consoleApiUrl: 'https://console.example.com' } }],
    ]);
    // The view follows what the core answered.
    expect(screen.getByRole('textbox', { name: 'Static domain (optional)' })).toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: 'Open Tally at login' })).toBeChecked();
    expect(bridge.settings.pollIntervalSec).toBe(10);
  });

  it('keeps the ngrok authtoken write-only: stored through the core, field emptied, never shown', async () => {
    const bridge = new TestBridge();
    bridge.settings = settingsView({
      tunnel: { provider: 'ngrok', publicUrl: null, ngrokDomain: null, localtunnelHost: null },
    });
    const { user } = setup(bridge);
    const field = await screen.findByLabelText('ngrok authtoken');
    expect(screen.getByText('No authtoken yet: ngrok needs one.')).toBeInTheDocument();
    expect(field).toHaveAccessibleDescription(/Kept in the system keychain/);
    expect(screen.getByRole('button', { name: 'Save authtoken' })).toBeDisabled();

    await user.type(field, '  2abcTOKEN_xyz ');
    await user.click(screen.getByRole('button', { name: 'Save authtoken' }));
    expect(bridge.callsOf('credentials:setNgrokToken')).toEqual([['2abcTOKEN_xyz']]);
    await screen.findByText('Authtoken stored in the keychain');
    expect(field).toHaveValue('');
    expect(screen.getByRole('status')).toHaveTextContent('Authtoken saved');

    await user.click(screen.getByRole('button', { name: 'Remove authtoken' }));
    await screen.findByText('No authtoken yet: ngrok needs one.');
    expect(bridge.callsOf('credentials:clearNgrokToken')).toEqual([[]]);
  });

  it('says why Save is disabled until both the service ID and the secret are typed', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({ configured: false, serviceId: null, source: null });
    const { user } = setup(bridge);
    const save = await screen.findByRole('button', { name: 'Save' });
    expect(save).toBeDisabled();
    expect(save).toHaveAccessibleDescription('Enter the service ID and the secret to save them.');
    await user.type(screen.getByLabelText('Service ID'), 'svc');
    await user.type(screen.getByLabelText('Secret'), 's3cret');
    expect(save).toBeEnabled();
    expect(screen.queryByText('Enter the service ID and the secret to save them.')).not.toBeInTheDocument();
  });

  it('translates the core’s error codes in Korean and keeps the specifics in English', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({ configured: true, serviceId: 'svc', source: 'keychain' });
    bridge.fail('credentials:test', 'bad_credentials', 'The service rejected the service ID and secret (`svc`).');
    const { user } = setup(bridge);
    onTestFinished(() => setLocale('en'));

    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    // English: the core's own words, with its terminal-style quotes made typographic.
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The service rejected the service ID and secret (“svc”).',
    );

    setLocale('ko');
    await user.click(await screen.findByRole('button', { name: '연결 테스트' }));
    await waitFor(() =>
      expect(screen.getByRole('alert')).toHaveTextContent(
        '서비스가 서비스 ID와 시크릿을 거부했습니다. 서비스 콘솔에서 확인해 주세요.',
      ),
    );
  });

  it('rejects a bad URL beside the field without calling the core', async () => {
    const bridge = new TestBridge();
    bridge.settings = settingsView({
      tunnel: { provider: 'url', publicUrl: null, ngrokDomain: null, localtunnelHost: null },
    });
    const { user } = setup(bridge);

    const field = await screen.findByRole('textbox', { name: 'Public URL' });
    await replace(user, field, 'ftp://files.example.com');

    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(field).toHaveAccessibleDescription(/Enter a full http:\/\/ or https:\/\/ address\./);
    expect(bridge.callsOf('settings:update')).toEqual([]);

    await replace(user, field, 'https://tally.example.com');
    await waitFor(() =>
      expect(bridge.callsOf('settings:update')).toEqual([[{ tunnel: { publicUrl: 'https://tally.example.com' } }]]),
    );
    expect(field).toHaveAttribute('aria-invalid', 'false');
  });

  it('Advanced → Update feed URL saves the feed (blank: the build’s own) and About names the running version', async () => {
    const bridge = new TestBridge();
    const store = new SettingsStore(bridge.bridge);
    onTestFinished(store.start());
    render(SettingsView, { store, native: true, version: '1.2.3' });
    const user = userEvent.setup({ delay: null });
    await user.click(await screen.findByText('Advanced'));
    expect(screen.getByText('About: Tally 1.2.3')).toBeInTheDocument();
    const feed = screen.getByRole('textbox', { name: 'Update feed URL' });
    expect(feed).toHaveAttribute('placeholder', 'Default');
    await replace(user, feed, 'ftp://updates.example.com');
    expect(feed).toHaveAttribute('aria-invalid', 'true');
    await replace(user, feed, 'https://updates.example.com/tally');
    await replace(user, feed, '');
    await waitFor(() =>
      expect(bridge.callsOf('settings:update')).toEqual([
        [{ updateFeedUrl: 'https://updates.example.com/tally' }],
        [{ updateFeedUrl: null }],
      ]),
    );
  });

  it('checks number ranges on the client', async () => {
    const { bridge, user } = setup();
    await user.click(await screen.findByText('Advanced'));
    const field = screen.getByRole('spinbutton', { name: 'Parallel downloads' });
    await replace(user, field, '50');
    expect(screen.getByText('Enter a whole number from 1 to 10.')).toBeInTheDocument();
    expect(bridge.callsOf('settings:update')).toEqual([]);
  });

  it('shows an error from the core beside the field and snaps a checkbox back', async () => {
    const bridge = new TestBridge().fail(
      'settings:update',
      'launch_failed',
      'Login items are managed by your administrator.',
    );
    const { user } = setup(bridge);
    const box = await screen.findByRole('checkbox', { name: 'Open Tally at login' });
    await user.click(box);
    expect(await screen.findByText('Login items are managed by your administrator.')).toBeInTheDocument();
    expect(box).not.toBeChecked();
  });

  it('sends the secret once and never shows it back', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({ configured: true, serviceId: 'svc-1', source: 'keychain' });
    const { user } = setup(bridge);

    const serviceId = await screen.findByRole('textbox', { name: 'Service ID' });
    const secret = screen.getByLabelText('Secret');
    expect(screen.getByText('Secret stored in the keychain')).toBeInTheDocument();
    await waitFor(() => expect(serviceId).toHaveValue('svc-1'));
    expect(secret).toHaveAttribute('type', 'password');
    expect(secret).toHaveValue('');

    await user.type(secret, 's3cr3t-value');
    await user.click(screen.getByRole('button', { name: 'Save' }));

    await waitFor(() =>
      expect(bridge.callsOf('credentials:set')).toEqual([[{ serviceId: 'svc-1', secret: 's3cr3t-value' }]]),
    );
    expect(await screen.findByText('Credentials saved.')).toBeInTheDocument();
    expect(secret).toHaveValue('');
    expect(document.body.innerHTML).not.toContain('s3cr3t-value');
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();
  });

  it('tests the stored credentials and reports the answer', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({ configured: true, serviceId: 'svc-1', source: 'keychain' });
    bridge.handle('credentials:test', () => ({ ok: false, message: 'The service rejected the secret.' }));
    const { user } = setup(bridge);

    await user.click(await screen.findByRole('button', { name: 'Test connection' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The service rejected the secret.');
    expect(bridge.callsOf('credentials:test')).toEqual([[]]);
  });

  it('explains a missing keychain plainly and does not offer to save', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({
      keychainAvailable: false,
      keychainMessage: 'No Secret Service is running. Install gnome-keyring, or set TALLY_SECRET.',
    });
    const { user } = setup(bridge);

    expect(await screen.findByRole('note')).toHaveTextContent('No Secret Service is running.');
    await user.type(screen.getByRole('textbox', { name: 'Service ID' }), 'svc');
    await user.type(screen.getByLabelText('Secret'), 'secret');
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();
  });

  it('says why a stored secret is not in use after the hosts changed, and still offers to save', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({
      configured: false,
      source: 'keychain',
      keychainAvailable: true,
      keychainMessage: 'The service hosts changed since the secret was entered, so it is not sent to them.',
    });
    const { user } = setup(bridge);
    expect(await screen.findByRole('note')).toHaveTextContent('hosts changed since the secret was entered');
    await user.clear(screen.getByRole('textbox', { name: 'Service ID' }));
    await user.type(screen.getByRole('textbox', { name: 'Service ID' }), 'svc');
    await user.type(screen.getByLabelText('Secret'), 'secret');
    expect(screen.getByRole('button', { name: 'Save' })).toBeEnabled();
  });

  it('manages the allowed upload origins', async () => {
    const bridge = new TestBridge();
    bridge.tunnel = tunnelStatus({ uploadUrl: 'https://abc.example.dev/upload/t0k' });
    const { user } = setup(bridge);

    expect(await screen.findByText('Add your web app’s origin to allow uploads.')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Upload URL (recordUrl)' })).toHaveValue(
      'https://abc.example.dev/upload/t0k',
    );

    const input = screen.getByRole('textbox', { name: 'New origin' });
    await user.type(input, 'https://app.example.com/path{Enter}');
    expect(screen.getByText(/Enter an origin like/)).toBeInTheDocument();
    expect(bridge.callsOf('settings:update')).toEqual([]);

    await user.clear(input);
    await user.type(input, 'https://App.Example.com/{Enter}');
    await waitFor(() =>
      expect(bridge.callsOf('settings:update')).toEqual([[{ uploadOrigins: ['https://app.example.com'] }]]),
    );
    const list = await screen.findByRole('list', { name: 'Allowed upload origins' });
    expect(within(list).getByText('https://app.example.com')).toBeInTheDocument();
    expect(input).toHaveValue('');

    await user.click(screen.getByRole('button', { name: 'Remove https://app.example.com' }));
    await waitFor(() => expect(bridge.callsOf('settings:update').at(-1)).toEqual([{ uploadOrigins: [] }]));
  });

  it('Advanced → Detailed log turns the log level to debug and back to info', async () => {
    const { bridge, user } = setup();
    await user.click(await screen.findByText('Advanced'));
    const box = screen.getByRole('checkbox', { name: 'Detailed log (for a bug report)' });
    expect(box).not.toBeChecked();
    expect(box).toHaveAccessibleDescription(/always keeps what happened/);
    await user.click(box);
    await waitFor(() => expect(bridge.callsOf('settings:update')).toEqual([[{ logLevel: 'debug' }]]));
    await user.click(box);
    await waitFor(() => expect(bridge.callsOf('settings:update').at(-1)).toEqual([{ logLevel: 'info' }]));
  });

  it('Advanced → Copy diagnostics puts the core’s report on the clipboard, or says why not', async () => {
    const bridge = new TestBridge().handle('app:diagnostics', () => ({ text: 'Tally diagnostics, report' }));
    const { user } = setup(bridge);
    await user.click(await screen.findByText('Advanced'));
    const button = screen.getByRole('button', { name: 'Copy diagnostics' });
    expect(button).toHaveAccessibleDescription(/secrets replaced by \[redacted\]/);
    await user.click(button);
    expect(bridge.clipboard).toEqual(['Tally diagnostics, report']);
    expect(await screen.findByRole('status')).toHaveTextContent('Diagnostics copied');

    bridge.fail('app:diagnostics', 'internal', 'The journal could not be read.');
    await user.click(button);
    expect(await screen.findByText('The journal could not be read.')).toBeInTheDocument();
    expect(bridge.clipboard).toHaveLength(1);
  });

  it('shows the tunnel status, copies and registers the webhook URL', async () => {
    const bridge = new TestBridge();
    bridge.tunnel = tunnelStatus({
      provider: 'ngrok',
      state: 'reachable',
      publicUrl: 'https://abc.ngrok.example/webhook/t0k',
      message: 'Checked a moment ago',
    });
    const { user } = setup(bridge);

    expect(await screen.findByText('Reachable')).toBeInTheDocument();
    expect(screen.getByText('Not registered with the service')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Copy webhook URL' }));
    expect(bridge.clipboard).toEqual(['https://abc.ngrok.example/webhook/t0k']);

    await user.click(screen.getByRole('button', { name: 'Register with the service' }));
    expect(await screen.findByText('Registered with the service')).toBeInTheDocument();
    expect(bridge.callsOf('webhook:register')).toHaveLength(1);

    bridge.emit('tunnel:status', tunnelStatus({ provider: 'ngrok', state: 'unreachable', message: 'Tunnel closed' }));
    expect(await screen.findByText('Unreachable')).toBeInTheDocument();
    expect(screen.getByText('— Tunnel closed')).toBeInTheDocument();
  });

  it('shows whether browsers can upload through the tunnel, with the reason, in English and Korean', async () => {
    const bridge = new TestBridge();
    const blocked = 'Browsers get a reminder page instead of Tally.';
    bridge.tunnel = tunnelStatus({
      provider: 'localtunnel',
      state: 'reachable',
      publicUrl: 'https://abc.loca.lt/hooks/t0k',
      uploads: 'blocked',
      uploadsMessage: blocked,
    });
    setup(bridge);
    const line = (await screen.findByText('Browser uploads: blocked')).closest('p')!;
    expect(line).toHaveClass('warn');
    expect(within(line).getByText(`— ${blocked}`)).toHaveAttribute('title', blocked);

    bridge.emit(
      'tunnel:status',
      tunnelStatus({ state: 'reachable', publicUrl: 'https://x.example/hooks/t', uploads: 'ok' }),
    );
    const ok = (await screen.findByText('Browser uploads: OK')).closest('p')!;
    expect(ok).not.toHaveClass('warn');
    expect(screen.queryByText(`— ${blocked}`)).not.toBeInTheDocument();

    // No public URL and nothing checked: no upload line at all.
    bridge.emit('tunnel:status', tunnelStatus({ uploads: 'off' }));
    await waitFor(() => expect(screen.queryByText(/^Browser uploads/)).not.toBeInTheDocument());

    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    bridge.emit('tunnel:status', tunnelStatus({ state: 'reachable', uploads: 'blocked', uploadsMessage: blocked }));
    expect(await screen.findByText('브라우저 업로드: 차단됨')).toBeInTheDocument();
  });

  it('shows the core’s status lines, keychain note and test answer in Korean, translated by code', async () => {
    const bridge = new TestBridge();
    bridge.credentials = credentialsStatus({
      configured: true,
      serviceId: 'svc',
      source: 'sandbox',
      keychainMessage: 'The OS keychain could not be used.',
      keychainNotes: [note('keychainUnusable')],
    });
    const tunnel = [note('demoDirect'), note('tunnelReachable', { provider: 'ngrok' })];
    bridge.tunnel = tunnelStatus({
      provider: 'ngrok',
      state: 'reachable',
      publicUrl: 'https://abc.ngrok.example/hooks/t0k',
      uploads: 'off',
      ...said('message', tunnel),
      ...said('uploadsMessage', [note('uploadsNoOrigin')]),
    });
    bridge.handle('credentials:test', () => ({
      ok: true,
      message: 'Connected: 3 channels live now.',
      notes: [note('connected', { count: 3 })],
    }));
    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    const { user } = setup(bridge);

    expect(
      await screen.findByText(
        '— 데모 모드: 내장 샌드박스가 웹훅을 이 컴퓨터로 바로 보냅니다. ngrok를 통해 연결됩니다.',
      ),
    ).toBeInTheDocument();
    expect(screen.getByText(/업로드가 허용된 웹 앱 출처\(origin\)가 아직 없어/)).toBeInTheDocument();
    expect(screen.getByRole('note')).toHaveTextContent('OS 키체인을 사용할 수 없습니다.');
    await user.click(screen.getByRole('button', { name: '연결 테스트' }));
    expect(await screen.findByText('연결되었습니다. 지금 라이브 중인 채널: 3개.')).toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(/Demo mode|Reachable through|Connected:|keychain could not/);
  });

  it('uses the native folder picker in Electron and a text field in a browser', async () => {
    const bridge = new TestBridge();
    bridge.handle('settings:chooseFolder', () => (bridge.settings = settingsView({ recordingsFolder: '/media/rec' })));
    const { user } = setup(bridge, true);
    await user.click(await screen.findByRole('button', { name: 'Choose…' }));
    expect(await screen.findByText('/media/rec')).toBeInTheDocument();
  });

  it('edits the folder as text without native access', async () => {
    const { bridge, user } = setup(new TestBridge(), false);
    expect(screen.queryByRole('button', { name: 'Choose…' })).not.toBeInTheDocument();
    await replace(user, await screen.findByRole('textbox', { name: 'Folder path' }), '/srv/tally');
    await waitFor(() => expect(bridge.callsOf('settings:update')).toEqual([[{ recordingsFolder: '/srv/tally' }]]));
  });

  it('shows the absolute folder the core saved for ~ and says how it reads such paths', async () => {
    const bridge = new TestBridge();
    // The core takes ~ as the home folder (core/paths.ts expandFolder) and answers with what it saved.
    bridge.handle(
      'settings:update',
      () => (bridge.settings = settingsView({ recordingsFolder: '/home/me/Videos/Tally' })),
    );
    const { user } = setup(bridge, false);
    const field = await screen.findByRole('textbox', { name: 'Folder path' });
    expect(screen.getByText(/^~ is your home folder/)).toBeInTheDocument();
    await replace(user, field, '~/Videos/Tally');
    await waitFor(() => expect(field).toHaveValue('/home/me/Videos/Tally'));
    expect(bridge.callsOf('settings:update')).toEqual([[{ recordingsFolder: '~/Videos/Tally' }]]);
  });
  it('shows a tunnel setting problem and a refused folder from the core wholly in Korean', async () => {
    const bridge = new TestBridge();
    // As the core sends them (tests/core-messages.spec.ts makes both with the real core): an ngrok tunnel
    // without an authtoken, and a folder with a file in its way.
    const authtoken = note('ngrokAuthtokenMissing');
    const missing = { code: 'config', message: noteText(authtoken), params: { note: authtoken.code } };
    bridge.tunnel = tunnelStatus({ provider: 'ngrok', state: 'error', ...said('message', [errorNote(missing)]) });
    const folder = '/home/me/file/rec';
    const refused = note('folderCannotUse', {
      folder,
      ...nested('source', note('folderSourceSettings')),
      why: 'a part of the path is a file, not a folder',
      whyNote: 'folderFileInWay',
    });
    bridge.handle('settings:update', () => {
      throw new RemoteError('config', noteText(refused), { ...refused.params, note: refused.code });
    });
    setLocale('ko');
    onTestFinished(() => setLocale('en'));
    const { user } = setup(bridge, false);

    expect(
      await screen.findByText(
        '— 설정을 확인해 주세요: ngrok에는 인증 토큰이 필요합니다. 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘ngrok 인증 토큰’에 입력하거나 “tally login --ngrok” 명령으로 저장하세요(키체인이 없으면 나만 읽을 수 있는 파일에 저장됩니다). TALLY_NGROK_AUTHTOKEN 환경 변수도 쓸 수 있습니다.',
      ),
    ).toBeInTheDocument();
    await replace(user, await screen.findByRole('textbox', { name: '폴더 경로' }), folder);
    expect(
      await screen.findByText(
        `설정을 확인해 주세요: ${folder} 폴더를 쓸 수 없습니다(설정 → ‘녹화 저장 위치’). 그 자리에 폴더 대신 파일이 있습니다. 다른 폴더를 고르세요.`,
      ),
    ).toBeInTheDocument();
    expect(document.body).not.toHaveTextContent(/needs an authtoken|Cannot use|Choose another folder/);
  });

  describe('how the service reaches Tally: the receiver port', () => {
    function setupWithHealth(bridge: TestBridge) {
      const store = new SettingsStore(bridge.bridge);
      const health = new HealthStore(bridge.bridge);
      onTestFinished(store.start());
      onTestFinished(health.start());
      render(SettingsView, { store, native: true, health });
      return { store, health, user: userEvent.setup({ delay: null }) };
    }

    it('says which local address an own URL must forward to, and saves the Receiver port', async () => {
      const bridge = new TestBridge();
      bridge.settings = settingsView({
        tunnel: { ...settingsView().tunnel, provider: 'url', publicUrl: 'https://t.example.com' },
      });
      bridge.health = healthView({
        receiver: { host: '127.0.0.1', port: null, configuredPort: 8787, portFollows: false },
      });
      const { user } = setupWithHealth(bridge);
      expect(await screen.findByText('Forward to 127.0.0.1:8787')).toBeInTheDocument();

      const port = screen.getByRole('spinbutton', { name: 'Receiver port' });
      expect(port).toHaveValue(8787);
      await replace(user, port, '9123');
      expect(bridge.callsOf('settings:update')).toEqual([[{ receiverPort: 9123 }]]);
      // The core moves the receiver and says so: the address follows.
      bridge.emit(
        'health:changed',
        healthView({ receiver: { host: '127.0.0.1', port: 9123, configuredPort: 9123, portFollows: false } }),
      );
      expect(await screen.findByText('Forward to 127.0.0.1:9123')).toBeInTheDocument();

      await replace(user, port, '70000');
      expect(await screen.findByText('Enter a whole number from 1 to 65535.')).toBeInTheDocument();
      expect(bridge.callsOf('settings:update')).toHaveLength(1);
    });

    it('falls back to the settings port before the health is known', async () => {
      const bridge = new TestBridge();
      bridge.settings = settingsView({ receiverPort: 8800, tunnel: { ...settingsView().tunnel, provider: 'url' } });
      bridge.handle('health:get', () => new Promise(() => {}));
      setupWithHealth(bridge);
      expect(await screen.findByText('Forward to 127.0.0.1:8800')).toBeInTheDocument();
    });

    it('wraps the tunnel line’s reason in every state instead of cutting it', async () => {
      const bridge = new TestBridge();
      const long =
        'The public URL answers, but its answer did not come from this receiver: check that the proxy forwards to 127.0.0.1:8787.';
      bridge.tunnel = tunnelStatus({ provider: 'url', state: 'unreachable', message: long });
      setupWithHealth(bridge);
      const reason = await screen.findByText(`— ${long}`);
      expect(reason).not.toHaveClass('ellipsis');
      expect(reason.closest('.status-line')).toHaveClass('wraps');
    });

    it('says "Registered" in green only while the public-path check passes', async () => {
      const bridge = new TestBridge();
      bridge.tunnel = tunnelStatus({
        provider: 'url',
        state: 'reachable',
        publicUrl: 'https://t.example.com/hooks/x',
        registered: true,
      });
      setupWithHealth(bridge);
      const ok = await screen.findByText('Registered with the service');
      await waitFor(() => expect(ok).toHaveClass('ok'));
      const down = healthView();
      down.components = down.components.map((c) =>
        c.id === 'publicPath' ? { ...c, state: 'error', reason: 'The public URL does not reach this receiver.' } : c,
      );
      bridge.emit('health:changed', { ...down, state: 'error' });
      const broken = await screen.findByText('Registered, but the public URL does not reach Tally right now');
      expect(broken).not.toHaveClass('ok');
      expect(broken).toHaveClass('warn');
    });

    it('says it in Korean', async () => {
      const bridge = new TestBridge();
      bridge.settings = settingsView({ tunnel: { ...settingsView().tunnel, provider: 'url' } });
      setLocale('ko');
      onTestFinished(() => setLocale('en'));
      setupWithHealth(bridge);
      expect(await screen.findByText('127.0.0.1:8787(으)로 전달')).toBeInTheDocument();
      expect(screen.getByRole('spinbutton', { name: '수신 포트' })).toHaveValue(8787);
    });
  });
});
