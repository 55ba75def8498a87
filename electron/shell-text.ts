/**
 * What the tray app says outside its popover: the tray menu and tooltip, its native dialogs and the desktop
 * notifications, in every language the popover speaks. One catalogue for the main process, the core (which
 * names a notification's text by key) and the renderer (whose locales include it, `shell.*`), so a language
 * chosen in Settings reaches the tray menu and the notifications too. Plain data: no Node, no Electron.
 * `{name}` marks a parameter, filled by `shellText`.
 */
import { noteText, noteTextFrom, type Note } from './core/notes.js';
import { koNotes } from './core/notes-ko.js';

export const SHELL_TEXT_EN = {
  trayOpen: 'Open Tally',
  trayLive: '{count} live',
  trayEnd: 'End {channel}…',
  trayMore: '{count} more in Tally…',
  trayOpenFolder: 'Open recordings folder',
  trayPause: 'Pause downloads',
  traySettings: 'Settings…',
  trayQuit: 'Quit Tally',
  trayUpdateReady: 'Update ready: restart',
  tooltipLive: '{count} live',
  tooltipDownloading: 'downloading {count}',
  tooltipDownloadingPercent: 'downloading {count} ({percent}%)',
  tooltipPaused: 'downloads paused',
  endTitle: 'End channel',
  endMessage: 'End channel “{channel}”?',
  endDetail: 'The broadcast stops for everyone watching. This cannot be undone.',
  endConfirm: 'End Channel',
  cancel: 'Cancel',
  ok: 'OK',
  endFailed: 'Could not end channel “{channel}”',
  pauseFailed: 'Could not pause receiving',
  resumeFailed: 'Could not resume receiving',
  unexpected: 'Something went wrong in Tally. The details are in the log.',
  savedTitle: 'Recording saved',
  savedBurstTitle: '{count} recordings saved',
  savedBurstBody: 'Latest: {name}',
  failedTitle: 'Recording failed',
  expiredTitle: 'Recording expired',
  expiredBody: '{channel}: the service deleted it before it could be downloaded.',
  uploadSavedTitle: 'Upload saved',
  uploadRefusedTitle: 'Client recording refused',
  liveTitle: 'Channel live',
  liveBody: '{channel} is live.',
  refusingTitle: 'New recordings are being refused',
  missingTitle: 'Recording expected but not received',
  missingBody:
    '{channel} closed {minutes} min ago and no recording arrived; look for it in the service console before it is deleted.',
  unreachableTitle: 'Webhook unreachable',
  unreachableBody: 'The service cannot reach this computer: recordings will not arrive.',
  healthTitle: 'Recordings are at risk',
  crashLoopTitle: 'Tally keeps stopping',
  crashLoopMessage: 'Tally stopped unexpectedly {count} times within a minute, so it does not start again on its own.',
  crashLoopDetail:
    'Your recordings and settings are kept. Copy the diagnostics into a bug report, then start Tally again when you are ready. The log is in {folder}.',
  crashLoopCopy: 'Copy diagnostics',
  rendererReloadedTitle: 'Tally’s window was reloaded',
  rendererReloadedBody: 'Its page stopped unexpectedly ({reason}); nothing was lost.',
} as const;

export type ShellTextKey = keyof typeof SHELL_TEXT_EN;
export type ShellTexts = Record<ShellTextKey, string>;

export const SHELL_TEXT_KO: ShellTexts = {
  trayOpen: 'Tally 열기',
  trayLive: '방송 중 {count}개',
  trayEnd: '{channel} 종료…',
  trayMore: 'Tally에서 {count}개 더 보기…',
  trayOpenFolder: '녹화 폴더 열기',
  trayPause: '다운로드 일시 중지',
  traySettings: '설정…',
  trayQuit: 'Tally 종료',
  trayUpdateReady: '업데이트 준비됨: 다시 시작',
  tooltipLive: '방송 중 {count}개',
  tooltipDownloading: '다운로드 중 {count}개',
  tooltipDownloadingPercent: '다운로드 중 {count}개({percent}%)',
  tooltipPaused: '다운로드 일시 중지됨',
  endTitle: '채널 종료',
  endMessage: '“{channel}” 채널을 종료할까요?',
  endDetail: '시청 중인 모든 사람에게 방송이 중단됩니다. 되돌릴 수 없습니다.',
  endConfirm: '채널 종료',
  cancel: '취소',
  ok: '확인',
  endFailed: '“{channel}” 채널을 종료하지 못했습니다',
  pauseFailed: '수신을 일시 중지하지 못했습니다',
  resumeFailed: '수신을 다시 시작하지 못했습니다',
  unexpected: 'Tally에 문제가 생겼습니다. 자세한 내용은 로그에 있습니다.',
  savedTitle: '녹화 저장됨',
  savedBurstTitle: '녹화 {count}개 저장됨',
  savedBurstBody: '최근: {name}',
  failedTitle: '녹화 실패',
  expiredTitle: '녹화 만료됨',
  expiredBody: '{channel}: 다운로드하기 전에 서비스가 파일을 삭제했습니다.',
  uploadSavedTitle: '업로드 저장됨',
  uploadRefusedTitle: '클라이언트 녹화 거부됨',
  liveTitle: '채널 방송 시작',
  liveBody: '{channel} 방송이 시작되었습니다.',
  refusingTitle: '새 녹화를 거부하고 있습니다',
  missingTitle: '녹화가 도착하지 않았습니다',
  missingBody:
    '{channel} 채널이 {minutes}분 전에 닫혔지만 녹화가 오지 않았습니다. 삭제되기 전에 서비스 콘솔에서 찾아보세요.',
  unreachableTitle: '웹훅에 연결할 수 없음',
  unreachableBody: '서비스가 이 컴퓨터에 연결할 수 없어 녹화가 도착하지 않습니다.',
  healthTitle: '녹화가 위험합니다',
  crashLoopTitle: 'Tally가 계속 종료됩니다',
  crashLoopMessage: 'Tally가 1분 안에 {count}번 예기치 않게 종료되어 자동으로 다시 시작하지 않습니다.',
  crashLoopDetail:
    '녹화와 설정은 그대로 있습니다. 진단 정보를 복사해 버그 신고에 붙여 넣은 뒤, 준비되면 Tally를 다시 시작하세요. 로그 위치: {folder}',
  crashLoopCopy: '진단 정보 복사',
  rendererReloadedTitle: 'Tally 창을 다시 불러왔습니다',
  rendererReloadedBody: '페이지가 예기치 않게 멈췄습니다({reason}). 잃은 것은 없습니다.',
};

export type ShellLanguage = 'en' | 'ko';

export const SHELL_TEXT: Record<ShellLanguage, ShellTexts> = { en: SHELL_TEXT_EN, ko: SHELL_TEXT_KO };

/** A text of this catalogue by key, with its parameters: how the core names a notification's words. */
export interface ShellText {
  key: ShellTextKey;
  params?: Record<string, string | number>;
}

/** The text in `language`, parameters filled in (an unknown parameter stays as written). */
export function shellText(language: ShellLanguage, text: ShellText | ShellTextKey): string {
  const { key, params = {} } = typeof text === 'string' ? { key: text } : text;
  return SHELL_TEXT[language][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** The language setting ('system' follows the OS's language, as the popover does) as a catalogue language. */
export function shellLanguage(setting: 'system' | 'en' | 'ko', systemLanguage: string | undefined): ShellLanguage {
  if (setting !== 'system') return setting;
  return systemLanguage?.toLowerCase().startsWith('ko') ? 'ko' : 'en';
}

/**
 * The core's notes (a health line, say) in `language`, from the same Korean catalogue the popover uses
 * (core/notes-ko.ts); a sentence nested in a note (`<name>Note`) is translated in place, as the popover does.
 */
export function notesTextIn(language: ShellLanguage, notes: readonly Note[]): string {
  if (language === 'en') return notes.map(noteText).join(' ');
  return notes.map((n) => noteTextFrom(koNotes, n)).join(' ');
}
