/**
 * Korean for the core's coded messages (electron/contract-notes.ts): every code the core sends must be here
 * (checked by the compiler through the English shape). Params keep their English names.
 */
import type { Messages } from './en.js';

export const koNotes: Messages['notes'] = {
  error: '{message}',
  tunnelStopped: '터널을 멈췄습니다.',
  tunnelOpening: '{provider} 터널을 여는 중…',
  tunnelNone: '터널이 없습니다. 수신기에는 이 컴퓨터나 같은 네트워크에서만 연결할 수 있습니다.',
  tunnelChecking: '{url} 확인 중…',
  tunnelReachable: '{provider}를 통해 연결됩니다.',
  tunnelReachableOwnUrl: '내 공개 URL을 통해 연결됩니다.',
  plainHttpLoopback:
    '{host}은(는) 일반 http라 이 컴퓨터에서만 연결할 수 있습니다. 서비스가 이 컴퓨터에서 실행될 때만 웹훅을 받을 수 있습니다.',
  plainHttpLan:
    '{host}은(는) 일반 http라 로컬 네트워크에서만 연결할 수 있습니다. 서비스가 같은 네트워크에서 실행될 때만 웹훅을 받을 수 있습니다.',
  hostLoopback: '{host}은(는) 이 컴퓨터에 있어 인터넷의 서비스가 연결할 수 없습니다.',
  hostLan: '{host}은(는) 로컬 네트워크에 있어 인터넷의 서비스가 연결할 수 없습니다.',
  tunnelClosed: '터널이 닫혔습니다: {reason}',
  tunnelFailed: '터널에 문제가 생겼습니다: {detail}',
  tunnelFailedChecks: '(연속 {count}회 확인 실패)',
  retryingMs: '{ms}ms 후 다시 시도합니다.',
  retryingSeconds: '{seconds}초 후 다시 시도합니다.',
  selfUnreachable: '{where}을(를) 통해 Tally에 연결하지 못했습니다: {detail}.',
  selfStatus:
    '{where}이(가) Tally의 자체 확인 대신 {status}(으)로 응답했습니다. 터널이 이 수신기로 전달하고 있지 않습니다.',
  selfShape: '{where}이(가) 응답했지만 Tally의 자체 확인 응답이 아닙니다. 이 URL 뒤에 다른 서버가 있습니다.',
  selfForeign:
    '{where}은(는) 이 수신기가 아닌 다른 Tally 수신기로 연결됩니다(다른 인스턴스나 이전 터널이 이 URL을 쓰고 있습니다).',
  portInUse:
    '포트 {port}을(를) 이미 사용 중이라 이번에는 수신기가 다른 포트에서 받고 있습니다. 포트 {port}(으)로 등록한 웹훅 URL로는 연결되지 않습니다.',
  demoDirect: '데모 모드: 내장 샌드박스가 웹훅을 이 컴퓨터로 바로 보냅니다.',
  receiverStarting: 'Tally를 시작하는 중입니다. 잠시 후 다시 시도하세요.',
  receiverNotRunning: '웹훅 수신기가 실행되고 있지 않습니다.',
  notReceiving: '녹화를 받지 못하고 있습니다:',
  changeNotApplied: '변경 사항을 적용하지 못해 이전 설정으로 계속 녹화를 받고 있습니다:',
  studioFailed: '스튜디오 공유를 시작하지 못했습니다(녹화는 계속 받고 있습니다):',
  uploadsOff: '웹 클라이언트 업로드가 꺼져 있습니다.',
  uploadsLocalOnly: '터널이 없습니다. 이 컴퓨터에 연결할 수 있는 페이지만 로컬 recordUrl로 업로드할 수 있습니다.',
  uploadsNoOrigin:
    '업로드가 허용된 웹 앱 출처(origin)가 아직 없어 어떤 브라우저도 업로드할 수 없습니다. 설정 → ‘웹 앱에서 올린 녹음’에서 추가하세요.',
  browserUnreachable: '브라우저의 업로드가 {where}을(를) 통해 Tally에 닿지 못했습니다: {detail}.',
  browserDropsHeader:
    '{where}이(가) 브라우저에 Tally 대신 응답하지만 CORS 응답에서 X-FILENAME 헤더를 빼고 있습니다. 중간의 무언가가 응답을 바꾸고 있습니다.',
  browserOk: '웹 페이지에서 {where}을(를) 통해 클라이언트 녹음을 올릴 수 있습니다.',
  browserDown: '{where}이(가) 응답하지 않는 동안에는 브라우저가 업로드할 수 없습니다:',
  browserPage:
    '{where}이(가) 브라우저의 업로드를 Tally로 넘기지 않고 자체 페이지(터널 경고 또는 안내 페이지, {status})를 보여 주며, 웹 페이지는 이를 건너뛸 수 없습니다. 그곳으로 보낸 클라이언트 녹음은 사라집니다.',
  browserRefused:
    'Tally가 {where}을(를) 통한 {origin}의 브라우저 확인을 거부했습니다. 설정 → ‘웹 앱에서 올린 녹음’에서 이 출처가 아직 허용되어 있나요?',
  browserNoCors:
    '{where}이(가) 브라우저의 업로드 사전 요청에 {status}(으)로 응답했고 {origin}에 대한 CORS 허용이 없습니다. 이 주소로는 페이지에서 업로드할 수 없습니다.',
  browserWhatToDo:
    '웹 클라이언트 업로드에는 브라우저 경고 페이지가 없는 터널을 쓰세요. 직접 운영하는 https URL(리버스 프록시, 이름 있는 cloudflared 터널, Tailscale Funnel)이나 경고 페이지가 없는 ngrok 요금제가 있습니다. 서비스의 웹훅에는 영향이 없습니다.',
  recordingGone: '방송이 끝나고 6시간이 지나 서비스에서 녹화를 삭제했습니다({at}).',
  recordingLate: '서비스가 녹화를 삭제하기 전({at})에 다운로드하지 못했습니다:',
  partialKept: '일부만 받은 사본({size})을 {path}에 남겨 두었습니다.',
  saveFailed: '녹화를 저장하지 못했습니다: {detail}',
  uploadRefused: '업로드를 거부했습니다({status}): {reason}',
  gapNoCredentials: '자격 증명이 없어 누락된 녹화를 확인할 수 없습니다.',
  connected: {
    one: '지금 라이브 중인 채널: {count}개.',
    other: '지금 라이브 중인 채널: {count}개.',
  },
  keychainUnusable: 'OS 키체인을 사용할 수 없습니다.',
  hostsChanged: '시크릿을 입력한 뒤 서비스 호스트가 바뀌어 시크릿을 보내지 않습니다. {reenter}.',
  reenterInSettings: '새 호스트를 사용하려면 설정 → ‘서비스 계정’에서 시크릿을 다시 입력하세요',
  folderNotAbsolute: '폴더의 전체 경로를 입력하세요.',
  folderUnusable: '{path}에는 녹화를 저장할 수 없습니다:',
  folderNoPermission: 'Tally에 그곳에 쓸 권한이 없습니다.',
  folderReadOnly: '디스크가 읽기 전용입니다.',
  folderFileInWay: '그 자리에 폴더 대신 파일이 있습니다.',
  folderDiskFull: '디스크가 가득 찼습니다.',
  folderNotAllowed: '이 파일 시스템에서는 그곳에 폴더를 만들 수 없습니다.',
  folderTimeout: '폴더가 제때 응답하지 않았습니다.',
  folderOther: '쓸 수 없습니다({code}).',
  studioNoReceiver: '수신기가 실행되고 있지 않습니다.',
  studioJetStream: {
    one: 'JetStream이 켜져 있습니다(스트림 {count}개).',
    other: 'JetStream이 켜져 있습니다(스트림 {count}개).',
  },
  teamRefused: '팀 서버가 자격 증명을 거부했습니다: {reason} ({where}). 설정 → ‘스튜디오’에서 입력하세요.',
  teamConnectionRefused:
    '팀 서버 {where}에 연결할 수 없습니다(연결 거부). 그곳에서 nats-server가 -js 옵션으로 실행 중인가요?',
  teamUnknownHost: '팀 서버의 호스트 {host}을(를) 찾을 수 없습니다(DNS).',
  teamUnreachable: '팀 서버 {where}에 연결하지 못했습니다: {detail}',
  teamNoTls: '팀 서버 {where}은(는) TLS를 제공하지 않습니다. 스튜디오 URL을 {fix}(으)로 바꾸세요.',
  teamNeedsTls: '팀 서버 {where}은(는) TLS가 필요합니다. 스튜디오 URL을 {fix}(으)로 바꾸세요.',
  teamAsks: '팀 서버가 자격 증명을 요구합니다: {reason} ({where}). 설정 → ‘스튜디오’에서 입력하세요.',
};
