/**
 * The core's messages as the popover shows them: errors a producer can meet in Settings (tunnel settings, a
 * refused settings change or folder, the service or keychain out of reach, the studio URL) and why a tunnel
 * check failed, made by the real core functions and carried the way the dispatcher sends them (errorEnvelope)
 * or a status says them (errorNote). In Korean nothing of the English sentence may be left; in English the
 * page shows exactly what the CLI prints. The renderer's modules are loaded by path (they belong to the web
 * type-check project, this file to the node one).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { errorNote, note, notesText, RemoteError, type Note } from '../electron/contract.js';
import { sendRequest } from '../electron/core/api-transport.js';
import { errorEnvelope } from '../electron/core/app/dispatch.js';
import { makeCore, runCleanups, tempHome } from './support/app/core-helpers.js';
import { CredentialStore, keyringError, MemorySecretStore } from '../electron/core/credentials.js';
import { ensureWritableFolder } from '../electron/core/folder-check.js';
import { applySettingsPatch, DEFAULT_SETTINGS, openSettingsStore } from '../electron/core/settings.js';
import { parseTeamUrl } from '../electron/core/studio/team.js';
import { checkSelf } from '../electron/core/tunnels/supervisor.js';
import { LocalTunnel, tunnelProviderFor } from '../electron/core/tunnels/index.js';

const RENDERER = resolve(fileURLToPath(new URL('../renderer/src/lib', import.meta.url)));
let setLocale: (locale: 'en' | 'ko') => void;
let messageOf: (error: unknown) => string;
let coreText: (text: string, notes: readonly Note[] | null) => string;

beforeAll(async () => {
  ({ setLocale } = (await import(join(RENDERER, 'i18n.ts'))) as { setLocale: typeof setLocale });
  ({ messageOf } = (await import(join(RENDERER, 'errors.ts'))) as { messageOf: typeof messageOf });
  ({ coreText } = (await import(join(RENDERER, 'notes.ts'))) as { coreText: typeof coreText });
});
afterEach(async () => {
  setLocale('en');
  await runCleanups();
});

/** Where a tunnel would forward to; the setting problems below fail before anything connects. */
const LOCAL = { host: '127.0.0.1', port: 9 };

/** A port on 127.0.0.1 that was free a moment ago: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('core messages in the popover', () => {
  /** A thrown core error as the page gets it back from a request (RemoteError over the WebSocket). */
  function overWire(error: unknown): RemoteError {
    const envelope = errorEnvelope(error);
    if (envelope.ok) throw new Error('not an error');
    const { code, message, params } = envelope.error;
    return new RemoteError(code, message, params);
  }

  /** What a rejected promise threw. */
  async function thrown(run: () => unknown): Promise<unknown> {
    try {
      await run();
    } catch (error) {
      return error;
    }
    throw new Error('it did not throw');
  }

  /** The message in English and in Korean, as the page shows it. */
  function shown(error: unknown): { en: string; ko: string } {
    setLocale('en');
    const en = messageOf(overWire(error));
    setLocale('ko');
    const ko = messageOf(overWire(error));
    setLocale('en');
    return { en, ko };
  }

  /**
   * Latin words of a Korean message beyond names, addresses, codes and quoted input: an English sentence left
   * in it would show here.
   */
  function englishIn(text: string): string[] {
    const rest = text
      .replace(/“[^”]*”/g, ' ')
      .replace(/\b[a-z]+:\/\/\S+/g, ' ')
      .replace(/\/\S+/g, ' ')
      .replace(/\b[\w-]+(?:\.[\w-]+)+\b/g, ' ')
      .replace(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b/g, ' ')
      .replace(/(^|\s)--?[a-z][\w-]*/g, ' ');
    const kept = new Set(['Tally', 'tally', 'login', 'ngrok', 'localtunnel', 'pollIntervalSec', 'http', 'https']);
    return (rest.match(/[A-Za-z]{2,}/g) ?? []).filter((word) => !kept.has(word));
  }

  it('says tunnel setting problems in Korean and keeps the English the CLI prints', async () => {
    const authtoken = await thrown(() => tunnelProviderFor({ provider: 'ngrok' }).open(LOCAL));
    expect((authtoken as Error).message).toBe(
      'ngrok needs an authtoken: set it in Settings → How the service reaches Tally → ngrok authtoken, or with `tally login --ngrok` (the keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
    );
    expect(shown(authtoken)).toEqual({
      en: 'ngrok needs an authtoken: set it in Settings → How the service reaches Tally → ngrok authtoken, or with “tally login --ngrok” (the keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
      ko: '설정을 확인해 주세요: ngrok에는 인증 토큰이 필요합니다. 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘ngrok 인증 토큰’에 입력하거나 “tally login --ngrok” 명령으로 저장하세요(키체인이 없으면 나만 읽을 수 있는 파일에 저장됩니다). TALLY_NGROK_AUTHTOKEN 환경 변수도 쓸 수 있습니다.',
    });

    const publicUrl = await thrown(() =>
      tunnelProviderFor({ provider: 'url', publicUrl: 'https://me:pw@tally.example.com' }).open(LOCAL),
    );
    expect((publicUrl as Error).message).toBe(
      'Settings → How the service reaches Tally → Public URL: The public URL must not contain a user name or password.',
    );
    expect(shown(publicUrl).ko).toBe(
      '설정을 확인해 주세요: 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘공개 URL’: 공개 URL에는 사용자 이름이나 비밀번호를 넣을 수 없습니다.',
    );

    const problems = await Promise.all([
      thrown(() => tunnelProviderFor({ provider: 'url', publicUrl: 'http://tally.example.com' }).open(LOCAL)),
      thrown(() => tunnelProviderFor({ provider: 'url' }).open(LOCAL)),
      thrown(() => tunnelProviderFor({ provider: 'localtunnel', localtunnelHost: 'ftp://lt.example.com' }).open(LOCAL)),
      thrown(() =>
        tunnelProviderFor({ provider: 'ngrok', ngrokDomain: 'not a domain' }, { ngrokAuthtoken: 'token' }).open(LOCAL),
      ),
    ]);
    for (const problem of problems) {
      const { en, ko } = shown(problem);
      expect(en).toBe((problem as Error).message.replace(/`([^`]+)`/g, '“$1”'));
      expect(ko).toMatch(/[\uac00-\ud7a3]/);
      expect(englishIn(ko), ko).toEqual([]);
    }
    // The same problem in the tunnel's status line (its state after opening failed).
    setLocale('ko');
    const notes = [errorNote(problems[3])];
    expect(coreText(notesText(notes), notes)).toBe(
      '설정을 확인해 주세요: 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘고정 도메인’: “not a domain”은(는) ngrok 도메인이 아닙니다. ngrok 대시보드의 고정 도메인(예: name.ngrok-free.app)을 입력하세요.',
    );
  });

  it('says a refused settings change and an unusable recordings folder in Korean', async () => {
    const invalid = await thrown(() => applySettingsPatch(DEFAULT_SETTINGS, { pollIntervalSec: 0 }));
    expect((invalid as Error).message).toMatch(/^Invalid settings: pollIntervalSec: /);
    expect(shown(invalid)).toEqual({
      en: (invalid as Error).message,
      ko: '값이 받아들여지지 않았습니다: 설정 값이 올바르지 않습니다(확인할 항목: 새로 고침 간격).',
    });

    const dir = await mkdtemp(join(tmpdir(), 'tally-notes-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'file'), 'x');
    const inTheWay = join(dir, 'file', 'recordings');
    const folder = await thrown(() => ensureWritableFolder(inTheWay, { source: note('folderSourceSettings') }));
    expect(shown(folder)).toEqual({
      en: `Cannot use ${inTheWay} as the recordings folder (Settings → Where recordings are saved): a part of the path is a file, not a folder. Choose another folder.`,
      ko: `설정을 확인해 주세요: ${inTheWay} 폴더를 쓸 수 없습니다(설정 → ‘녹화 저장 위치’). 그 자리에 폴더 대신 파일이 있습니다. 다른 폴더를 고르세요.`,
    });
  });

  it('says credentials, keychain and studio problems in Korean', async () => {
    // A service host that refuses connections.
    const port = await closedPort();
    const refused = await thrown(() =>
      sendRequest(
        {
          method: 'POST',
          url: `http://127.0.0.1:${port}/v1/channels`,
          endpoint: 'broadcast-channel-list',
          kind: 'read',
        },
        { userAgent: 'tally-test', timeoutMs: 5_000 },
        undefined,
      ),
    );
    expect(shown(refused)).toEqual({
      en: `Could not reach the service for the live channel list: connection refused by 127.0.0.1:${port}. Check the network connection and the host settings.`,
      ko: `방송 중인 채널 목록 요청으로 서비스에 연결할 수 없습니다: 127.0.0.1:${port}이(가) 연결을 거부했습니다. 네트워크 연결과 호스트 설정을 확인해 주세요.`,
    });

    const keychain = keyringError(new Error('The unlock prompt was dismissed'));
    const both = await thrown(() =>
      new CredentialStore(new MemorySecretStore()).save({ serviceId: 'svc', secret: '' }),
    );
    const studio = await thrown(() => parseTeamUrl('http://studio.local:4222', note('studioUrlField')));
    expect((studio as Error).message).toBe(
      'Settings → Studio → Team servers must start with nats:// or tls:// (got http://).',
    );
    expect(shown(studio).ko).toBe(
      '설정을 확인해 주세요: 설정 → 스튜디오 → 팀 서버은(는) nats:// 또는 tls://로 시작해야 합니다(입력한 값: http://).',
    );
    for (const problem of [keychain, both]) {
      const { en, ko } = shown(problem);
      expect(en).toBe((problem as Error).message);
      expect(englishIn(ko), ko).toEqual([]);
    }
  });

  it('says why a connection failed in Korean inside the tunnel check, and as it was in English', async () => {
    const port = await closedPort();
    const result = await checkSelf({ url: `http://127.0.0.1:${port}/.tally/self`, expectedId: 'x' });
    if (result.ok) throw new Error('the check passed');
    expect(coreText(result.message, result.notes)).toBe(
      `Could not reach Tally through http://127.0.0.1:${port}: connection refused.`,
    );
    setLocale('ko');
    expect(coreText(result.message, result.notes)).toBe(
      `http://127.0.0.1:${port}을(를) 통해 Tally에 연결하지 못했습니다: 연결이 거부되었습니다.`,
    );
  });

  it('says a tunnel server’s refusal in Korean around the server’s own words', async () => {
    // A localtunnel server that is up but refuses new tunnels.
    const server = createServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'maintenance' }));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
    const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const refused = await thrown(() => new LocalTunnel({ host }).open(LOCAL));
    expect(shown(refused)).toEqual({
      en: `The localtunnel server at ${host} answered 503: maintenance.`,
      ko: `서비스가 Tally에 연결할 수 없습니다: ${host}의 localtunnel 서버가 503(으)로 응답했습니다: maintenance.`,
    });
  });

  it('says what the app core’s own requests refuse in Korean: no credentials, a folder, no public URL', async () => {
    const home = await tempHome({ demoMode: false });
    const core = await makeCore(home, { demo: undefined });
    await core.start();
    const none = await thrown(() => core.handlers['channels:live']());
    expect(shown(none).ko).toBe(
      '설정을 확인해 주세요: 자격 증명이 없습니다. 설정 → ‘서비스 계정’에서 서비스 ID와 시크릿을 입력하세요(또는 TALLY_SERVICE_ID와 TALLY_SECRET을 설정하세요).',
    );
    await writeFile(join(home, 'file'), 'x');
    const folder = await thrown(() =>
      core.handlers['settings:update']({ recordingsFolder: join(home, 'file', 'rec') }),
    );
    const register = await thrown(() => core.handlers['webhook:register']());
    for (const problem of [none, folder, register]) {
      const { en, ko } = shown(problem);
      expect(en).toBe((problem as Error).message);
      expect(englishIn(ko), ko).toEqual([]);
    }
  });

  it('says a receiver that cannot listen in Korean, naming the settings.json fields', async () => {
    const home = await tempHome();
    const core = await makeCore(home);
    await core.start();
    // settings.json edited by hand: an address this computer does not have.
    openSettingsStore(home).update({ receiverHost: '192.0.2.1' });
    const refused = await thrown(() => core.handlers['settings:update']({ concurrency: 2 }));
    expect(shown(refused)).toEqual({
      en: 'The webhook receiver could not listen on 192.0.2.1:0: EADDRNOTAVAIL. Check receiverHost and receiverPort in settings.json.',
      ko: '설정을 확인해 주세요: 웹훅 수신기가 192.0.2.1:0에서 연결을 받을 수 없습니다: EADDRNOTAVAIL. settings.json의 receiverHost와 receiverPort를 확인하세요.',
    });
  });
});
