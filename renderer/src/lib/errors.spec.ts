import { afterEach, describe, expect, it } from 'vitest';
import { codedMessage, RemoteError, type ErrorView } from '../../../electron/contract.js';
import { messageOf } from './errors.js';
import { setLocale } from './i18n.js';

/** A core error as the page receives it over the WebSocket: the envelope's ErrorView, as a RemoteError. */
function overWs({ code, message, params }: ErrorView): RemoteError {
  return new RemoteError(code, message, params);
}

/** The same over Electron IPC: contextBridge keeps only the message, so code and params ride in it. */
function overIpc({ code, message, params }: ErrorView): Error {
  return new Error(codedMessage(code, message, params));
}

afterEach(() => setLocale('en'));

describe('messageOf: core errors with specifics', () => {
  // What the core's dispatcher sends for these errors (electron/core/app/dispatch.spec.ts checks the same views).
  const cases: ErrorView[] = [
    {
      code: 'unknown_channel',
      message: 'The service has no live channel with ID "main-stage".',
      params: { channel: 'main-stage' },
    },
    {
      code: 'service_error',
      message: 'The service answered 503 for broadcast-channel-list: <html>busy</html>.',
      params: { status: 503, endpoint: 'broadcast-channel-list' },
    },
    {
      code: 'timeout',
      message: 'The service did not answer search within 12.5 s.',
      params: { endpoint: 'search', seconds: 12.5 },
    },
    {
      code: 'network',
      message:
        'Could not reach the service for signal.example.test: connect ECONNREFUSED. Check the network connection and the host settings.',
      params: { endpoint: 'signal.example.test' },
    },
  ];

  it('shows the core’s own English message in English, naming a service endpoint as a producer knows it', () => {
    const english = [
      cases[0]?.message,
      'The service answered 503 for the live channel list. Try again in a moment.',
      'The service did not answer the channel search within 12.5 s. Check the connection and try again.',
      cases[3]?.message,
    ];
    expect(cases.map((e) => messageOf(overWs(e)))).toEqual(english);
    expect(cases.map((e) => messageOf(overIpc(e)))).toEqual(english);
    // Never an internal path such as /lambda/broadcast-channel-list.
    const path = { code: 'network', message: 'x', params: { endpoint: '/lambda/broadcast-channel-list' } };
    expect(messageOf(overWs(path))).toBe(
      'Could not reach the service for the live channel list. Check the network connection and the host settings.',
    );
  });

  it('translates them into Korean with the channel, endpoint, status or time in place, over both transports', () => {
    setLocale('ko');
    const expected = [
      '서비스에 방송 중인 채널 “main-stage”이(가) 없습니다.',
      '서비스가 방송 중인 채널 목록 요청에 503(으)로 응답했습니다. 잠시 후 다시 시도해 주세요.',
      '서비스가 채널 검색 요청에 12.5초 안에 응답하지 않았습니다. 연결을 확인하고 다시 시도해 주세요.',
      'signal.example.test 요청으로 서비스에 연결할 수 없습니다. 네트워크 연결과 호스트 설정을 확인해 주세요.',
    ];
    expect(cases.map((e) => messageOf(overWs(e)))).toEqual(expected);
    expect(cases.map((e) => messageOf(overIpc(e)))).toEqual(expected);
    // No English left over.
    for (const text of expected) expect(text).not.toMatch(/\b(The|service|Could|answer)\b/);
  });

  it('falls back to the code’s plain translation when the params are missing, never to English', () => {
    setLocale('ko');
    expect(messageOf(new RemoteError('unknown_channel', 'The service has no live channel with ID "x".'))).toBe(
      '서비스에 이 ID로 방송 중인 채널이 없습니다.',
    );
    expect(messageOf({ code: 'network', message: 'Could not reach…', params: { other: 1 } })).toBe(
      '서비스에 연결할 수 없습니다. 네트워크 연결을 확인해 주세요.',
    );
  });

  it('takes params from a pushed ErrorView too (app:error), and ignores anything but strings and numbers', () => {
    setLocale('ko');
    const pushed = { code: 'not_ended', message: 'The service did not end…', params: { channel: 'q-and-a' } };
    expect(messageOf(pushed)).toBe(
      '서비스가 채널 “q-and-a”을(를) 종료하지 않았습니다. 아직 방송 중일 수 있으니 다시 시도해 주세요.',
    );
    const hostile = { code: 'not_ended', message: 'x', params: { channel: { toString: 'no' } } };
    expect(messageOf(hostile)).toBe('서비스가 채널을 종료하지 않았습니다. 다시 시도해 주세요.');
  });
});
