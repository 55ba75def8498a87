/**
 * Korean for the core's coded messages (electron/core/notes.ts): every code the core sends must be here
 * (checked by the compiler through the English shape). Params keep their English names. One catalogue for the
 * popover (renderer/src/locales/ko.ts includes it) and the tray app's main process (the tray's health line).
 */
import type { NOTE_TEXT } from './notes.js';

export const koNotes: typeof NOTE_TEXT = {
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
  partialReleased: '디스크를 비우려고 일부만 받은 사본({size})을 삭제했습니다.',
  downloadShort:
    '서버가 알린 것보다 적게 보냅니다({expected}바이트 중 {actual}바이트). 다시 받으며, 서버가 계속 그만큼만 보내면 알린 것보다 짧다고 표시해 저장합니다.',
  diskWait:
    '{folder}의 디스크 공간을 기다리는 중입니다: {needed} 필요, 다른 다운로드와 저널용으로 남겨 둔 {floor}를 빼면 {free} 남았습니다.',
  diskBelowFloor:
    '일시 중지됨: {folder}의 디스크 여유 공간이 {free}로, 저널용으로 남겨 두는 {floor}보다 적습니다. 공간이 생기면 다시 시작합니다.',
  saveFailed: '녹화를 저장하지 못했습니다: {detail}',
  uploadRefused: '업로드를 거부했습니다({status}): {reason}',
  gapNoCredentials: '자격 증명이 없어 누락된 녹화를 확인할 수 없습니다.',
  uploadRefusedLocal: '{name}(내 스트림):',
  uploadRefusedRemote: '{name}(상대 스트림):',
  uploadRefusedUnnamed: '웹 클라이언트 녹음:',
  uploadUnknownPath: '알 수 없는 경로입니다',
  uploadPreflightNoOrigin: '사전 요청에 Origin 헤더가 없습니다.',
  uploadMethod: '{method} 요청은 받지 않습니다. POST로 올리세요',
  uploadNoOrigin: '업로드가 허용된 웹 앱 출처가 아직 없습니다. 설정 → ‘웹 앱에서 올린 녹음’에서 추가하세요',
  uploadOriginRefused:
    '페이지 출처 {origin}은(는) 녹음을 올리도록 허용되어 있지 않습니다. 설정 → ‘웹 앱에서 올린 녹음’에서 추가하세요.',
  uploadBusy: {
    one: '이미 업로드 {count}개를 받고 있어 한 번에 받을 수 있는 최대치이고, 자리를 내줄 만큼 느리지 않습니다. 1분 뒤에 다시 보내세요.',
    other:
      '이미 업로드 {count}개를 받고 있어 한 번에 받을 수 있는 최대치이고, 자리를 내줄 만큼 느린 업로드가 없습니다. 1분 뒤에 다시 보내세요.',
  },
  uploadBusyAddress: {
    one: '{address}에서 온 업로드 {count}개를 이미 받고 있어 한 주소에서 받을 수 있는 최대치이고, 자리를 내줄 만큼 느리지 않습니다. 1분 뒤에 다시 보내세요.',
    other:
      '{address}에서 온 업로드 {count}개를 이미 받고 있어 한 주소에서 받을 수 있는 최대치이고, 자리를 내줄 만큼 느린 업로드가 없습니다. 1분 뒤에 다시 보내세요.',
  },
  uploadEvicted:
    '다른 업로드에 자리를 내주려고 닫았습니다: 최근 {seconds}초 동안 {rate}로, 업로드가 유지해야 하는 {min}보다 느렸습니다',
  uploadNoBoundary: '멀티파트 Content-Type에 올바른 경계 문자열이 없습니다.',
  uploadEmpty: '업로드가 비어 있습니다.',
  uploadTooLarge: '녹음이 업로드 한도 {limit}보다 큽니다.',
  uploadFolderLinked:
    '클라이언트 업로드 폴더 {folder}이(가) 심볼릭 링크입니다. Tally는 녹화 폴더 안의 링크를 거쳐 쓰지 않습니다. 링크를 지우세요.',
  uploadDiskFull: '디스크가 가득 찼습니다. {folder}의 공간을 비우세요. 업로드를 저장하지 못했으니 다시 보내세요.',
  uploadDiskFullSizes:
    '디스크가 가득 찼습니다. {folder}의 공간을 비우세요({needed} 필요, {free} 남음). 업로드를 저장하지 못했으니 다시 보내세요.',
  uploadNoRoom:
    '{folder}에 이 업로드를 받을 디스크 공간이 부족합니다. {needed} 필요, 저널을 위해 남겨 두는 {floor}을(를) 빼면 {free} 남음. 저장하지 않았으니 공간을 확보한 뒤 다시 보내세요.',
  uploadNoRoomStreaming:
    '{folder}에 이 업로드의 나머지({received} 이후)를 받을 디스크 공간이 부족합니다. 저널을 위해 남겨 두는 {floor}을(를) 빼면 {free} 남음. 저장하지 않았으니 공간을 확보한 뒤 다시 보내세요.',
  uploadNameTaken: '이름이 "{name}"인 업로드가 이미 9999개를 넘습니다.',
  uploadClientGone: '업로드가 끝나기 전에 연결이 끊겼습니다',
  uploadIdle: '{seconds}초 동안 아무것도 받지 못했습니다',
  multipartIncomplete: '멀티파트 본문이 마지막 경계 전에 끝났습니다(업로드가 끝나지 않음).',
  multipartHeaders: '멀티파트 부분의 헤더가 잘못되었거나 {limit}보다 큽니다.',
  multipartMalformed: '멀티파트 본문이 잘못되었습니다: {detail}.',
  multipartFieldTooLarge: '양식 필드가 {bytes}바이트보다 큽니다.',
  multipartTwoFiles: '업로드 하나에 파일 하나만 보내세요. 이 본문에는 파일이 둘 이상 있습니다.',
  multipartTooManyParts: '멀티파트 본문의 부분이 {parts}개보다 많습니다.',
  multipartNoFile: '멀티파트 본문에 파일 부분이 없습니다.',
  webhooksFull: {
    one: '다운로드를 기다리는 녹화가 {count}개로 Tally가 받을 수 있는 최대치입니다. 일부가 끝날 때까지 새 웹훅을 거부합니다',
    other:
      '다운로드를 기다리는 녹화가 {count}개로 Tally가 받을 수 있는 최대치입니다. 일부가 끝날 때까지 새 웹훅을 거부합니다',
  },
  webhookNotStored: '녹화를 저장하지 못했습니다({cause}). 다시 시도하세요',
  storeDiskFull: '상태 폴더의 디스크가 가득 찼습니다({errno})',
  storeReadOnly: '상태 폴더의 디스크가 읽기 전용입니다({errno})',
  storeDiskFailed: '상태 폴더의 디스크에 오류가 났습니다({errno})',
  storeOther: '상태 폴더에 쓰지 못했습니다: {detail}',
  connected: {
    one: '지금 라이브 중인 채널: {count}개.',
    other: '지금 라이브 중인 채널: {count}개.',
  },
  keychainUnusable: 'OS 키체인을 사용할 수 없습니다.',
  hostsChanged: '시크릿을 입력한 뒤 서비스 호스트가 바뀌어 시크릿을 보내지 않습니다. {reenter}.',
  reenterInSettings: '새 호스트를 사용하려면 설정 → ‘서비스 계정’에서 시크릿을 다시 입력하세요',
  folderUnusable: '{path}에는 녹화를 저장할 수 없습니다:',
  folderNoPermission: 'Tally에 그곳에 쓸 권한이 없습니다.',
  folderReadOnly: '디스크가 읽기 전용입니다.',
  folderFileInWay: '그 자리에 폴더 대신 파일이 있습니다.',
  demoFolderRefused:
    '{folder}은(는) 데모 전용 폴더로, 데모를 실행할 때마다 오래된 녹화가 지워집니다. 실제 녹화에는 다른 폴더를 고르세요.',
  folderDiskFull: '디스크가 가득 찼습니다.',
  folderNotAllowed: '이 파일 시스템에서는 그곳에 폴더를 만들 수 없습니다.',
  folderTimeout: '폴더가 제때 응답하지 않았습니다.',
  folderOther: '쓸 수 없습니다({code}).',
  studioNoReceiver: '수신기가 실행되고 있지 않습니다.',
  studioReceiverDemo:
    '데모 모드: 샌드박스의 녹화는 스튜디오와 공유되지 않습니다. 실제 서비스를 사용하면 이 컴퓨터가 스튜디오의 수신기가 됩니다(설정 → ‘서비스 계정’).',
  studioJetStream: {
    one: 'JetStream이 켜져 있습니다(스트림 {count}개).',
    other: 'JetStream이 켜져 있습니다(스트림 {count}개).',
  },
  studioServersDown: {
    one: '지금 연결할 수 없는 서버: {servers}(서버 대부분이 응답하면 스튜디오는 동작합니다).',
    other: '지금 연결할 수 없는 서버: {servers}(서버 대부분이 응답하면 스튜디오는 동작합니다).',
  },
  teamRefused: '팀 서버가 자격 증명을 거부했습니다: {reason} ({where}). 설정 → ‘스튜디오’에서 입력하세요.',
  teamConnectionRefused:
    '팀 서버 {where}에 연결할 수 없습니다(연결 거부). 그곳에서 nats-server가 -js 옵션으로 실행 중인가요?',
  teamUnknownHost: '팀 서버의 호스트 {host}을(를) 찾을 수 없습니다(DNS).',
  teamUnreachable: '팀 서버 {where}에 연결하지 못했습니다: {detail}',
  studioSharesStuck: {
    one: '저장된 녹화 {count}개가 {seconds}초 넘게 팀과 공유되지 못하고 있습니다: {reason}',
    other: '저장된 녹화 {count}개가 {seconds}초 넘게 팀과 공유되지 못하고 있습니다: {reason}',
  },
  studioClusterCannotStore:
    '팀 서버가 지금은 녹화를 저장할 수 없습니다(클러스터라면 서버 대부분이 꺼져 있거나 리더를 새로 뽑는 중일 수 있습니다)',
  teamConnectionLost: '팀 서버와의 연결이 끊겨 다시 연결하는 중입니다.',
  teamNotAnswering:
    '팀 서버 {where}가 응답하지 않습니다({seconds}초 동안 응답 없음). 다시 연결합니다(목록에 다른 서버가 있으면 그 서버로).',
  teamCannotStore: '팀 서버 {where}가 지금 녹화를 저장하거나 알리지 못합니다: {detail}',
  teamCannotMirror:
    '팀 서버 {where}가 지금 이 멤버에게 알림도 녹화도 보내지 못해 새 녹화를 미러링하지 못합니다: {detail}',
  teamNoTls: '팀 서버 {where}은(는) TLS를 제공하지 않습니다. 설정 → 스튜디오 → 팀 서버에 {fix}을(를) 쓰세요.',
  teamNeedsTls: '팀 서버 {where}은(는) TLS가 필요합니다. 설정 → 스튜디오 → 팀 서버에 {fix}을(를) 쓰세요.',
  teamAsks: '팀 서버가 자격 증명을 요구합니다: {reason} ({where}). 설정 → ‘스튜디오’에서 입력하세요.',
  studioMemberTwin:
    '다른 컴퓨터가 지금 이 멤버와 같은 ID로 스튜디오를 따르고 있습니다({host}의 {name}): 상태 폴더 {folder}가 복사되었습니다. 둘 중 하나에 자체 상태 폴더(TALLY_HOME)를 주거나 그쪽 {folder}의 member-id를 지운 뒤 다시 시작하세요.',
  studioMemberNamesake:
    '다른 멤버도 이름이 {name}입니다({host}): 둘 다 모든 녹화를 받지만 리시버가 둘을 구분하지 못합니다. 둘 중 하나에 다른 이름(--name)을 주세요.',
  teamNoJetStream:
    '팀 서버 {where}가 JetStream 없이 실행 중입니다: nats-server를 -js로 시작하세요(녹화가 재시작 후에도 디스크에 남도록 -sd DIR도 함께).',
  s3KeysRefused:
    'S3 버킷 {bucket}이 키를 거부했습니다({reason}): 이 컴퓨터의 AWS_ACCESS_KEY_ID와 AWS_SECRET_ACCESS_KEY를 확인하세요.',
  s3NoKeys:
    '이 컴퓨터에 S3 버킷 {bucket}의 키가 없습니다: AWS_ACCESS_KEY_ID와 AWS_SECRET_ACCESS_KEY를 설정하세요(또는 키가 있는 프로필을 AWS_PROFILE로 지정하세요).',
  s3NoKeysProfile:
    'AWS 프로필 {profile}에 S3 버킷 {bucket}의 키가 없습니다: 그 프로필에 키를 추가하거나 AWS_ACCESS_KEY_ID와 AWS_SECRET_ACCESS_KEY를 설정하세요.',
  s3NoEndpoint:
    '녹화는 S3 버킷 {bucket}에 있는데 {host}에 연결할 수 없습니다: S3 호환 서버(Ceph, MinIO 등)라면 TALLY_S3_ENDPOINT에 그 URL을 설정하세요.',
  studioClaimedElsewhere:
    '스튜디오의 다른 리시버가 내려받는 중입니다: 공유되면 팀 서버에서 그 사본을 저장하고, 그 리시버가 멈추면 이 리시버가 직접 내려받습니다.',
  studioFolderFull:
    '스튜디오 폴더 {folder}가 가득 찼습니다: {channel}에 {needed}가 더 필요한데 {free}만 남아 있습니다. 공간을 비우거나 다른 폴더(--folder)로 따르세요. 전송은 저절로 이어집니다.',
  studioMemberLagging: {
    one: '멤버 {member}에게 받지 않은 녹화가 {count}개 있고, {left} 후 팀 서버에서 사라집니다: 그 전에 그 멤버(tally follow 또는 앱)를 시작하거나, 리시버에서 보관 기간(--retention)을 늘리세요.',
    other:
      '멤버 {member}에게 받지 않은 녹화가 {count}개 있고, 가장 오래된 것이 {left} 후 팀 서버에서 사라집니다: 그 전에 그 멤버(tally follow 또는 앱)를 시작하거나, 리시버에서 보관 기간(--retention)을 늘리세요.',
  },
  studioSelfLagging: {
    one: '이 컴퓨터가 아직 받지 않은 스튜디오 녹화가 {count}개 있고, {left} 후 팀 서버에서 사라집니다: 저장될 때까지 Tally가 계속 따르게 두세요.',
    other:
      '이 컴퓨터가 아직 받지 않은 스튜디오 녹화가 {count}개 있고, 가장 오래된 것이 {left} 후 팀 서버에서 사라집니다: 저장될 때까지 Tally가 계속 따르게 두세요.',
  },
  studioFollowerNoRegister:
    '이 컴퓨터는 스튜디오를 따르고 있습니다. 웹훅 URL은 스튜디오의 수신기가 등록하며, 여기서 등록하면 수신기가 웹훅을 받지 못하게 됩니다(설정 → ‘스튜디오’).',
  studioUrlField: '설정 → 스튜디오 → 팀 서버',
  studioUrlNeeded: '설정 → 스튜디오 → 팀 서버: 팀 서버를 입력해야 합니다(예: nats://studio.local:4222).',
  teamUrlNotUrl: '{flag}은(는) nats://studio.local:4222 같은 URL이어야 합니다. 입력한 값: “{input}”',
  teamUrlScheme: '{flag}은(는) nats:// 또는 tls://로 시작해야 합니다(입력한 값: {scheme}//).',
  teamUrlNoHost: '{flag}에는 nats://studio.local:4222처럼 호스트가 있어야 합니다.',
  teamUrlCredentials:
    '{flag}에 자격 증명을 넣을 수 없습니다. “tally login --team” 명령으로 저장하거나 TALLY_TEAM_USER / TALLY_TEAM_PASSWORD를 설정하세요.',
  teamUrlsMixedScheme: '{flag}: 클러스터의 모든 서버는 같은 방식을 써야 합니다(모두 nats:// 또는 모두 tls://).',
  teamJetStreamBusy:
    '팀 서버가 아직 응답하지 않았습니다({detail}). 클러스터의 서버 하나가 꺼져 있거나 새 리더를 정하는 중일 수 있습니다. 다시 시도합니다.',
  teamUrlPath: '{flag}에는 경로를 넣을 수 없습니다. nats://호스트:포트 형식으로 입력하세요.',
  teamCredentialsIncomplete: '팀 자격 증명에는 사용자와 비밀번호, 또는 토큰이 필요합니다.',
  tunnelSettingAt: '설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘{field}’: {detail}',
  fieldConnection: '연결 방식',
  fieldPublicUrl: '공개 URL',
  fieldStaticDomain: '고정 도메인',
  fieldServer: '서버',
  ngrokAuthtokenMissing:
    'ngrok에는 인증 토큰이 필요합니다. 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘ngrok 인증 토큰’에 입력하거나 “tally login --ngrok” 명령으로 저장하세요(키체인이 없으면 나만 읽을 수 있는 파일에 저장됩니다). TALLY_NGROK_AUTHTOKEN 환경 변수도 쓸 수 있습니다.',
  ngrokTokenFileOpen:
    'ngrok 인증 토큰 파일 {path}을(를) 다른 사용자도 읽을 수 있어 Tally가 사용하지 않습니다. “chmod 600 {path}”를 실행하거나 토큰을 다시 저장하세요.',
  ngrokAuthtokenRefused:
    'ngrok이 인증 토큰을 받아들이지 않았습니다({providerCode}). ngrok 대시보드에서 다시 복사해 설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘ngrok 인증 토큰’에 입력하거나 “tally login --ngrok” 명령으로 저장하세요.',
  ngrokDomainRefused:
    'ngrok이 도메인 {domain}을(를) 거부했습니다({providerCode}). 이 계정에 예약된 도메인이 아닙니다. ngrok 대시보드에서 고정 도메인을 확인하세요.',
  ngrokDomainBusy:
    'ngrok 도메인 {domain}이(가) 이미 다른 세션에서 사용 중입니다({providerCode}). 다른 ngrok 에이전트나 Tally 인스턴스를 닫으세요.',
  ngrokSessionLimit: 'ngrok 계정의 동시 세션 수가 한도에 이르렀습니다({providerCode}). 다른 ngrok 에이전트를 닫으세요.',
  ngrokNotDomain:
    '“{domain}”은(는) ngrok 도메인이 아닙니다. ngrok 대시보드의 고정 도메인(예: name.ngrok-free.app)을 입력하세요.',
  publicUrlMissing:
    '설정 → ‘서비스가 Tally에 연결하는 방법’의 ‘공개 URL’을 입력하거나 --tunnel https://your.host 옵션으로 지정하세요.',
  publicUrlNotUrl: '“{url}”은(는) URL이 아닙니다. 공개 https 주소(예: https://tally.example.com)를 입력하세요.',
  publicUrlScheme: '공개 URL은 https://로 시작해야 합니다(입력한 값: {scheme}).',
  publicUrlCredentials: '공개 URL에는 사용자 이름이나 비밀번호를 넣을 수 없습니다.',
  publicUrlQuery: '공개 URL에는 쿼리(?...)나 프래그먼트(#...)를 넣을 수 없습니다.',
  publicUrlHooks: 'Tally로 전달되는 기본 주소만 웹훅 경로 없이 입력하세요. 웹훅 경로는 Tally가 직접 붙입니다.',
  publicUrlNowhere: '{host}은(는) 아무도 연결할 수 없는 주소입니다.',
  publicUrlNeedsHttps:
    '웹훅은 인터넷을 거치므로 공개 URL은 https여야 합니다. 일반 http는 이 컴퓨터나 로컬 네트워크의 주소에만 쓸 수 있습니다.',
  localtunnelNotUrl: '“{url}”은(는) localtunnel 서버 URL이 아닙니다. 예: https://tunnel.example.com',
  localtunnelScheme: 'localtunnel 서버 URL은 https:// 또는 http://로 시작해야 합니다.',
  localtunnelParts: 'localtunnel 서버 URL에는 사용자 이름, 비밀번호, 쿼리, 프래그먼트를 넣을 수 없습니다.',
  ngrokLost: 'ngrok과의 연결이 끊어졌습니다.',
  ngrokClosedOpening: 'ngrok 터널을 여는 도중에 터널이 닫혔습니다.',
  ngrokNoUrl: 'ngrok이 터널을 열었지만 공개 URL을 알려 주지 않았습니다.',
  ngrokSdkMissing: '이 시스템에서 ngrok 모듈을 불러올 수 없습니다: {detail}',
  ngrokFailed: 'ngrok이 터널을 열지 못했습니다: {detail}',
  ngrokFailedCode: 'ngrok이 터널을 열지 못했습니다({providerCode}): {detail}',
  localtunnelClosedOpening: 'localtunnel 터널을 여는 도중에 터널이 닫혔습니다.',
  localtunnelRedirects: '{host}의 localtunnel 서버가 {origin}(으)로 넘겨줍니다. 그 주소를 서버로 입력하세요.',
  localtunnelAnswered: '{host}의 localtunnel 서버가 {status}(으)로 응답했습니다.',
  localtunnelAnsweredSaying: '{host}의 localtunnel 서버가 {status}(으)로 응답했습니다: {detail}.',
  localtunnelNotServer: '{host}의 서버가 localtunnel 서버처럼 응답하지 않았습니다.',
  webhookNoUrlYet: '아직 등록할 공개 웹훅 URL이 없습니다. 먼저 터널을 시작하세요.',
  noPublicUrl: '먼저 터널 방식을 고르세요. 서비스는 루프백 URL에 연결할 수 없습니다.',
  shuttingDown: 'Tally를 종료하는 중입니다.',
  receiverCannotListen: '웹훅 수신기가 {where}에서 연결을 받을 수 없습니다: {why}.',
  receiverFieldsFix: '{listen} settings.json의 receiverHost와 receiverPort를 확인하세요.',
  receiverPortBusy: '포트를 이미 사용 중입니다(다른 Tally가 실행 중인가요?)',
  receiverNoPermission: '권한이 없습니다',
  localtunnelUnreachable: '{host}의 localtunnel 서버에 연결하지 못했습니다: {detail}.',
  localtunnelFailed: 'localtunnel 연결에 문제가 생겼습니다: {detail}',
  localtunnelNoTunnel: '{host}의 localtunnel 서버가 터널을 열지 못했습니다: {detail}',
  localtunnelSlow: '{host}의 localtunnel 서버가 {seconds}초 안에 터널을 열지 못했습니다.',
  netRefused: '연결이 거부되었습니다',
  netReset: '연결이 끊어졌습니다',
  netUnknownHost: '호스트 이름을 찾을 수 없습니다',
  netUnreachable: '네트워크에 연결할 수 없습니다',
  netTimeout: '{seconds}초 안에 응답이 없었습니다',
  netCancelled: '요청이 취소되었습니다',
  netFailed: '연결하지 못했습니다({errno})',
  apiRefused: '{host}이(가) 연결을 거부했습니다',
  apiUnknownHost: '호스트 {host}을(를) 찾을 수 없습니다',
  apiLookupFailed: '{host}의 이름을 잠시 조회하지 못했습니다',
  apiReset: '{host}와의 연결이 끊어졌습니다',
  apiClosedSending: '{host}와의 연결이 보내는 도중에 닫혔습니다',
  apiTimedOut: '{host}와의 연결 시간이 초과되었습니다',
  apiUnreachable: '이 네트워크에서 {host}에 연결할 수 없습니다',
  apiClosedEarly: '응답을 다 받기 전에 {host}와의 연결이 닫혔습니다',
  apiTls: '{host}의 TLS 인증서를 받아들이지 않았습니다({errno})',
  apiCutOff: '{host}의 응답이 중간에 끊겼습니다',
  apiFailedCode: '{host}에 연결하지 못했습니다({errno})',
  apiFailed: '{host}에 연결하지 못했습니다',
  invalidSettings: '설정 값이 올바르지 않습니다({detail}).',
  invalidFields: '확인할 항목: {fields}',
  folderCannotUse: '{folder} 폴더를 쓸 수 없습니다({source}). {why} 다른 폴더를 고르세요.',
  folderSourceField: '녹화 폴더',
  folderSourceSettings: '설정 → ‘녹화 저장 위치’',
  folderTooLong: '경로가 너무 깁니다.',
  folderLoops: '경로가 심볼릭 링크로 순환합니다.',
  keychainLocked:
    '키체인이 잠겨 있습니다(잠금 해제 창이 닫혔거나 표시되지 못했습니다). 잠금을 해제한 뒤 다시 시도하거나 TALLY_SERVICE_ID와 TALLY_SECRET을 설정하세요.',
  keychainNoService:
    '시크릿 서비스가 실행되고 있지 않습니다. gnome-keyring이나 KeePassXC를 설치하고 잠금을 해제하거나 TALLY_SERVICE_ID와 TALLY_SECRET을 설정하세요.',
  keychainFailed: 'OS 키체인을 사용할 수 없습니다({detail}). TALLY_SERVICE_ID와 TALLY_SECRET을 설정할 수도 있습니다.',
  noCredentials:
    '자격 증명이 없습니다. 설정 → ‘서비스 계정’에서 서비스 ID와 시크릿을 입력하세요(또는 TALLY_SERVICE_ID와 TALLY_SECRET을 설정하세요).',
  keychainDamaged: '키체인에 저장된 자격 증명이 손상되었습니다. “tally login” 명령을 다시 실행하세요.',
  keychainNone: 'OS 키체인을 사용할 수 없습니다.',
  credentialsBoth: '서비스 ID와 시크릿이 모두 필요합니다.',
  credentialsNotStorable: '자격 증명을 저장할 수 없습니다: {detail}',
  ngrokTokenNotStorable: 'ngrok 인증 토큰을 저장할 수 없습니다: {detail}',
  channelSays: '{channel}:',
  attnCredentialsRefused: '서비스가 자격 증명을 거부했습니다',
  attnNotReceiving: '녹화를 받지 못하고 있습니다',
  attnChangeNotApplied: '변경 사항을 적용하지 못했습니다',
  attnRefusing: '새 녹화를 거부하고 있습니다',
  attnUnreachable: '웹훅 URL에 연결할 수 없습니다',
  attnTunnelError: '터널을 시작하지 못했습니다',
  attnFailed: { one: '녹화 {count}개 실패', other: '녹화 {count}개 실패' },
  healthAllOk: '모두 정상입니다. 웹훅이 Tally에 도착하고 녹화가 저장됩니다.',
  healthMemberAllOk: '모두 정상입니다. 스튜디오의 녹화가 이 컴퓨터로 복사됩니다.',
  healthReceiverOk: '{host}:{port}에서 웹훅을 받고 있습니다.',
  healthReceiverMoved:
    '{host}:{port}에서 웹훅을 받고 있습니다({configured}번은 사용 중이며 {provider} 주소는 포트를 따라갑니다).',
  healthPortHeldBy: '{port}번 포트를 {program}(프로세스 {pid})이(가) 사용 중이라 웹훅이 Tally에 도착할 수 없습니다.',
  healthPortHeld: '{port}번 포트를 다른 프로그램이 사용 중이라 웹훅이 Tally에 도착할 수 없습니다.',
  healthPortHeldByTally:
    '{port}번 포트를 다른 Tally({face}, 프로세스 {pid})가 사용 중이라 웹훅은 이 Tally가 아니라 그쪽에 도착합니다.',
  healthPortActionApp:
    '그 프로그램을 종료하거나, 다른 포트를 고르고(설정 → 서비스가 Tally에 연결하는 방법 → 수신 포트) 공개 URL이 그 포트로 전달되게 하세요. Tally는 {port}번 포트를 계속 시도합니다.',
  healthPortActionCli:
    '그 프로그램을 종료하거나, --port <포트>로 실행하고(또는 receiverPort 설정) 공개 URL이 그 포트로 전달되게 하세요. Tally는 {port}번 포트를 계속 시도합니다.',
  healthPortActionTallyApp:
    '그 Tally를 종료하거나(실행 중인 터미널에서 Ctrl+C, 또는 트레이 메뉴의 종료), 다른 포트를 고르고(설정 → 서비스가 Tally에 연결하는 방법 → 수신 포트) 공개 URL이 그 포트로 전달되게 하세요. Tally는 {port}번 포트를 계속 시도합니다.',
  healthPortActionTallyCli:
    '그 Tally를 종료하거나(실행 중인 터미널에서 Ctrl+C, 또는 트레이 메뉴의 종료), --port <포트>로 실행하고(또는 receiverPort 설정) 공개 URL이 그 포트로 전달되게 하세요. Tally는 {port}번 포트를 계속 시도합니다.',
  healthReceiverDown: '웹훅 수신기가 실행되고 있지 않습니다: {reason}',
  healthReceiverStarting: '웹훅 수신기를 시작하는 중입니다.',
  healthRefusing: '새 녹화 웹훅을 거부하고 있습니다: {reason}',
  healthRefusingAction:
    '상태 폴더의 디스크 공간을 확보하거나 다운로드가 따라잡을 때까지 기다리세요. 거부된 녹화는 다시 전송되지 않습니다.',
  healthPublicOk: '공개 URL이 이 수신기로 전달됩니다(서명된 확인 요청이 돌아왔습니다).',
  healthPublicDemo: '데모 모드: 샌드박스가 웹훅을 이 컴퓨터로 바로 보냅니다.',
  healthPublicNone: '공개 URL이 없어 서비스가 이 컴퓨터에 연결할 수 없습니다.',
  healthPublicNoneActionApp: '설정 → 서비스가 Tally에 연결하는 방법에서 터널이나 내 URL을 고르세요.',
  healthPublicNoneActionCli: '--tunnel ngrok, --tunnel localtunnel 또는 --tunnel <https URL>을 추가하세요.',
  healthPublicChecking: '공개 URL이 이 수신기로 전달되는지 확인하는 중…',
  healthPublicDown: '공개 URL이 이 수신기로 전달되지 않습니다: {reason}',
  healthPublicDownAction: 'Tally 앞의 터널이나 리버스 프록시를 확인하세요({host}:{port}(으)로 전달해야 합니다).',
  healthPublicWaiting: '수신기가 연결을 받기 시작하면 공개 경로를 엽니다.',
  healthRegisteredOk: '서비스가 이 URL로 녹화를 보냅니다.',
  healthRegisteredBroken: '등록되어 있지만 지금은 공개 URL이 이 수신기로 전달되지 않습니다.',
  healthNotRegistered: 'Tally가 이 URL을 서비스에 등록하지 않았습니다.',
  healthNotRegisteredActionApp: '설정 → 서비스가 Tally에 연결하는 방법에서 등록을 누르거나 자동 등록을 켜세요.',
  healthNotRegisteredActionCli: '--register로 실행하거나 공개 URL을 서비스 콘솔에 붙여 넣으세요.',
  healthRegisterFailed: 'URL을 서비스에 등록하지 못했습니다: {reason}',
  healthRegisterWaiting: '공개 URL이 동작해야 등록할 수 있습니다.',
  healthRegistrationDemo: '데모 모드: 샌드박스가 이 수신기로 보냅니다.',
  healthRegistrationMember: '스튜디오 멤버: 서비스의 웹훅은 스튜디오 수신기가 받습니다.',
  healthDownloadsOk: '주의가 필요한 다운로드가 없습니다.',
  healthDownloadsPaused: '다운로드가 일시 중지되었습니다. 녹화는 받아서 대기 중입니다.',
  healthDownloadsPausedAction: '트레이 메뉴나 팝오버에서 수신을 다시 시작하세요.',
  healthDownloadsFailing: {
    one: '다운로드 {count}개가 실패해 다시 시도를 기다립니다: {reason}',
    other: '다운로드 {count}개가 실패해 다시 시도를 기다립니다: {reason}',
  },
  healthDownloadsUrgent: {
    one: '실패 중인 다운로드 {count}개가 한 시간 안에 만료됩니다: {reason}',
    other: '실패 중인 다운로드 {count}개가 한 시간 안에 만료됩니다: {reason}',
  },
  healthDownloadsLost: {
    one: '녹화 {count}개가 실패했거나 만료되었거나 서비스에서 사라졌습니다(최근 24시간).',
    other: '녹화 {count}개가 실패했거나 만료되었거나 서비스에서 사라졌습니다(최근 24시간).',
  },
  healthDownloadsActionApp: '녹화의 문제 항목에서 지금 다시 시도하거나, 처리한 뒤 제거하세요.',
  healthDownloadsActionCli: '"tally retry <채널>"을 실행해 지금 다시 시도하세요.',
  healthDownloadsShort: {
    one: '녹화 {count}개가 서비스가 알린 것보다 짧게 저장되었습니다(최근 24시간): {channel}, {expected}바이트 중 {actual}바이트.',
    other:
      '녹화 {count}개가 서비스가 알린 것보다 짧게 저장되었습니다(최근 24시간). 첫 번째 {channel}: {expected}바이트 중 {actual}바이트.',
  },
  healthDownloadsShortAction: '파일을 방송과 비교해 보세요. 서버가 나머지를 보내지 않았습니다.',
  healthDownloadsStalled: {
    one: '다운로드 {count}개가 {minutes}분 동안 진행되지 않았습니다.',
    other: '다운로드 {count}개가 {minutes}분 동안 진행되지 않았습니다.',
  },
  healthDiskOk: '녹화용 여유 공간 {free}.',
  healthDiskLow: '{path}의 여유 공간이 {free}뿐입니다.',
  healthDiskFull: '{path}이(가) 거의 가득 찼습니다(여유 {free}). 다운로드와 새 웹훅이 실패합니다.',
  healthDiskUnknown: '{path}의 여유 공간을 읽을 수 없습니다: {detail}',
  healthDiskWaiting: {
    one: '녹화 {count}개가 {path}의 공간을 기다립니다. {needed}이(가) 필요하고 {free}이(가) 남아 있습니다.',
    other: '녹화 {count}개가 {path}의 공간을 기다립니다. 첫 번째에 {needed}이(가) 필요하고 {free}이(가) 남아 있습니다.',
  },
  healthUploadsNoRoom:
    '{path}의 공간이 부족해 웹 클라이언트 업로드를 거절하고 있습니다. 마지막 업로드에 {needed} 필요, 저널용 예비 공간을 빼면 {free} 남음.',
  healthDiskAction: '공간을 확보하거나 다른 디스크의 녹화 폴더를 고르세요.',
  healthDiskNotFolder: '{path}은(는) 폴더가 아니라 파일입니다. 녹화를 저장할 수 없습니다.',
  healthDiskNotFolderActionApp: '파일을 옮기거나 설정 → 폴더 경로에서 다른 폴더를 고르세요.',
  healthDiskNotFolderActionCli: '파일을 옮기거나 다른 --folder로 다시 시작하세요.',
  healthKeychainOk: 'OS 키체인을 사용할 수 있습니다.',
  healthKeychainMissing: 'OS 키체인이 없습니다: {reason}',
  healthStudioOk: '스튜디오 팀 서버에 연결되어 있습니다.',
  healthStudioConnecting: '스튜디오 팀 서버에 연결하는 중…',
  healthStudioDown: '스튜디오: {reason}',
  healthStudioAction: '녹화는 이 컴퓨터에 계속 저장되고 팀 서버가 응답하면 공유됩니다.',
  healthMemberMissed: {
    one: '녹화 {count}개가 이 멤버가 복사하기 전에 팀 서버에서 만료되었습니다.',
    other: '녹화 {count}개가 이 멤버가 복사하기 전에 팀 서버에서 만료되었습니다.',
  },
  healthMemberMissedAction: '문제 항목에 표시됩니다. 필요하면 수신 컴퓨터에 요청한 뒤 목록에서 제거하세요.',
  healthMemberStudioAction: '이미 복사된 녹화는 그대로 있고, 새 녹화는 팀 서버가 응답하면 복사됩니다.',
  recordingGoneNow:
    '서비스에 이 녹화가 없습니다({status} {detail}). 삭제되었거나 저장된 적이 없습니다. Tally는 마감 시각까지 가끔 다시 확인합니다.',
};
