import { afterEach, describe, expect, it } from 'vitest';
import { note, noteText, type Note } from '../../../electron/contract.js';
import { setLocale } from './i18n.js';
import { coreText } from './notes.js';

afterEach(() => setLocale('en'));

describe('coreText', () => {
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
