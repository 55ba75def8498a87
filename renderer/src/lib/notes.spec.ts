import { afterEach, describe, expect, it } from 'vitest';
import { errorNote, nested, note, noteText, RemoteError, type Note } from '../../../electron/contract.js';
import { messageOf } from './errors.js';
import { setLocale } from './i18n.js';
import { coreText } from './notes.js';

afterEach(() => setLocale('en'));

describe('coreText', () => {
  it('translates a thrown error nested in a sentence by the note it was made from (the keychain health line)', () => {
    const thrown = Object.assign(new Error(noteText(note('keychainNoService'))), {
      code: 'CONFIG',
      params: { note: 'keychainNoService' },
    });
    const notes = [note('healthKeychainMissing', nested('reason', errorNote(thrown)))];
    const english = notes.map(noteText).join(' ');
    expect(english).toMatch(/^No OS keychain: No Secret Service is running/);
    setLocale('ko');
    const korean = coreText(english, notes);
    expect(korean).toMatch(/^OS 키체인이 없습니다: /);
    expect(korean).not.toMatch(/No Secret Service/);
  });

  it('shows the core’s notes in Korean with their specifics in place, and as the core wrote them in English', () => {
    const notes = [note('folderUnusable', { path: '/media/rec' }), note('folderFileInWay')];
    const english = notes.map(noteText).join(' ');
    expect(english).toBe('Recordings cannot be saved in /media/rec: A file is in the way of that folder.');
    expect(coreText(english, notes)).toBe(english);

    setLocale('ko');
    expect(coreText(english, notes)).toBe(
      '/media/rec에는 녹화를 저장할 수 없습니다: 그 자리에 폴더 대신 파일이 있습니다.',
    );
    expect(coreText('Connected: 1,234 channels live now.', [note('connected', { count: 1234 })])).toBe(
      '지금 라이브 중인 채널: 1,234개.',
    );
  });

  it('shows numbers that name something (a port, a status) as written, and amounts with grouping', () => {
    const notes = [note('healthPortHeld', { port: 8787 })];
    const english = notes.map(noteText).join(' ');
    expect(english).toContain('8787');
    expect(coreText(english, notes)).toBe(english);
    setLocale('ko');
    const korean = coreText(english, notes);
    expect(korean).toContain('8787');
    expect(korean).not.toContain('8,787');
  });

  it('shows the ports and process of the receiver health as written: the port asked for, the one used, the holder', () => {
    const moved = note('healthReceiverMoved', { host: '127.0.0.1', port: 41234, configured: 8787, provider: 'ngrok' });
    const held = note('healthPortHeldBy', { port: 8787, program: 'nginx', pid: 12345 });
    expect(coreText(noteText(moved), [moved])).toBe(
      'Receiving webhooks on 127.0.0.1:41234 (8787 is taken; the ngrok address follows the port).',
    );
    expect(coreText(noteText(held), [held])).toBe(
      'Port 8787 is in use by nginx (process 12345): webhooks cannot reach Tally.',
    );
    setLocale('ko');
    expect(coreText(noteText(held), [held])).not.toMatch(/8,787|12,345/);
  });

  it('translates an error note by its error code, and keeps the English text for a code it does not know', () => {
    setLocale('ko');
    const refused = note('error', { errorCode: 'bad_credentials', message: 'The service rejected the secret.' });
    expect(coreText('The service rejected the secret.', [refused])).toBe(
      '서비스가 서비스 ID와 시크릿을 거부했습니다. 서비스 콘솔에서 확인해 주세요.',
    );
    // A newer core may send a code this page lacks: one unknown note keeps the whole message in English.
    const newer: Note[] = [note('demoDirect'), { code: 'somethingNew', params: { x: 1 } }];
    expect(coreText('Demo mode: … Something new.', newer)).toBe('Demo mode: … Something new.');
    expect(coreText('Tunnel stopped.', null)).toBe('Tunnel stopped.');
  });
});

describe('nested notes', () => {
  // What the core sends for a public URL it refuses (tunnels/unusable.ts; tests/core-messages.spec.ts makes it).
  const refused = note('tunnelSettingAt', {
    ...nested('field', note('fieldPublicUrl')),
    ...nested('detail', note('publicUrlScheme', { scheme: 'ftp:' })),
  });
  const english = noteText(refused);

  it('puts each nested sentence in place translated, and keeps the core’s English as it is', () => {
    expect(english).toBe(
      'Settings → How the service reaches Tally → Public URL: The public URL must start with https:// (got ftp:).',
    );
    expect(coreText(english, [refused])).toBe(english);
    setLocale('ko');
    expect(coreText(english, [refused])).toBe(
      '설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘공개 URL’: 공개 URL은 https://로 시작해야 합니다(입력한 값: ftp:).',
    );
  });

  it('translates a thrown error written as a note, inside the wrapper of its code', () => {
    const params = { ...refused.params, note: refused.code };
    expect(messageOf(new RemoteError('config', english, params))).toBe(english);
    setLocale('ko');
    expect(messageOf(new RemoteError('config', english, params))).toBe(
      '설정을 확인해 주세요: 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘공개 URL’: 공개 URL은 https://로 시작해야 합니다(입력한 값: ftp:).',
    );
    // A nested code this page does not know leaves that sentence in the core's English, not a key.
    const newer = { ...params, detailNote: 'somethingNewer' };
    expect(messageOf(new RemoteError('config', english, newer))).toContain('The public URL must start with https://');
  });
});
