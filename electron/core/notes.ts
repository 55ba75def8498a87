/**
 * The core's own vocabulary: messages with a stable code (electron/contract.ts re-exports them for the
 * renderer, which is why this file imports nothing). Status lines, reasons and
 * test results the core sends in English for the log and the CLI also travel as notes: a code from
 * `NOTE_TEXT` and its params. The popover translates each note by its code (the English dictionary takes its
 * `notes` from here, other languages must cover every code), and falls back to the English text for a code it
 * does not know (a newer core behind `tally serve`). A thrown TallyError may be written as a note too: its
 * English text is the message, and the note travels in the error's params (the code as `note`), so the popover
 * says refused settings, tunnel and folder problems in its own language. A sentence inside another one (a
 * reason after a colon) is `nested`: its English under a param, its code under `<param>Note`.
 */
export type NoteParams = Record<string, string | number>;

/**
 * One sentence of a core message: its code and the specifics it names. Its schema is in note-schema.ts: zod
 * costs a thread 11 MB, and the download engine's worker, which throws these errors, never validates a note.
 */
export interface Note {
  code: string;
  params?: NoteParams | undefined;
}

/** Forms chosen by the `count` param (the renderer's Plural has the same shape). */
export interface PluralText {
  one: string;
  other: string;
}

/**
 * The English text of every note code; `{name}` marks a param. `error` carries a core error whole: its
 * message, its stable code as `errorCode` and its own params (the popover translates it like any error).
 */
export const NOTE_TEXT = {
  error: '{message}',
  // Tunnel status (tunnels/supervisor.ts)
  tunnelStopped: 'Tunnel stopped.',
  tunnelOpening: 'Opening the {provider} tunnel...',
  tunnelNone: 'No tunnel: the receiver is reachable only on this computer or network.',
  tunnelChecking: 'Checking {url}...',
  tunnelReachable: 'Reachable through {provider}.',
  tunnelReachableOwnUrl: 'Reachable through your public URL.',
  plainHttpLoopback:
    'Plain http on {host}: only this computer can reach it, so the service can deliver webhooks here only if it runs there too.',
  plainHttpLan:
    'Plain http on {host}: only your local network can reach it, so the service can deliver webhooks here only if it runs there too.',
  hostLoopback: '{host} is on this computer: the service on the internet cannot reach it.',
  hostLan: '{host} is on your local network: the service on the internet cannot reach it.',
  tunnelClosed: 'Tunnel closed: {reason}',
  tunnelFailed: 'Tunnel failed: {detail}',
  tunnelFailedChecks: '({count} failed checks in a row)',
  retryingMs: 'Retrying in {ms} ms.',
  retryingSeconds: 'Retrying in {seconds} s.',
  selfUnreachable: 'Could not reach Tally through {where}: {detail}.',
  selfStatus: "{where} answered {status} instead of Tally's self-check: the tunnel is not forwarding to this receiver.",
  selfShape: "{where} answered, but not with Tally's self-check: another server is behind this URL.",
  selfForeign:
    '{where} reaches a different Tally receiver, not this one (another instance or an old tunnel owns this URL).',
  demoDirect: 'Demo mode: the embedded sandbox sends its webhooks straight to this computer.',
  receiverStarting: 'Tally is still starting; try again in a moment.',
  receiverNotRunning: 'The webhook receiver is not running.',
  notReceiving: 'Recordings are not being received:',
  changeNotApplied: 'The change could not be applied, so the previous setup is still receiving recordings:',
  studioFailed: 'Studio sharing could not be started (recordings are still received):',
  // Web client uploads as a browser sees them (tunnels/browser-check.ts)
  uploadsOff: 'Web client uploads are off.',
  uploadsLocalOnly: 'No tunnel: only pages that can reach this computer can upload to the local recordUrl.',
  uploadsNoOrigin:
    'No web app origin is allowed to upload yet, so no browser can: add it in Settings → Recordings from your web app.',
  browserUnreachable: "A browser's upload could not reach Tally through {where}: {detail}.",
  browserDropsHeader:
    '{where} answers browsers for Tally but drops the X-FILENAME header from the CORS answer: something in between rewrites it.',
  browserOk: 'Web pages can upload client recordings through {where}.',
  browserDown: 'Browsers cannot upload through {where} while it is down:',
  browserPage:
    '{where} shows browsers a page of its own (a tunnel warning or reminder page, {status}) instead of passing their uploads to Tally, and a web page cannot skip it: client recordings sent there are lost.',
  browserRefused:
    'Tally refused the browser check from {origin} through {where}: is that origin still allowed in Settings → Recordings from your web app?',
  browserNoCors:
    "{where} answered a browser's upload preflight with {status} and no CORS permission for {origin}: pages cannot upload through it.",
  browserWhatToDo:
    'Use a tunnel without a browser warning page for web client uploads: your own https URL (a reverse proxy, a named cloudflared tunnel, Tailscale Funnel) or an ngrok plan without the warning page. Webhooks from the service are not affected.',
  // Recording reasons (pipeline/download-manager.ts, app/recording-views.ts)
  recordingGone: 'The service deleted the recording 6 hours after the broadcast ended (at {at}).',
  recordingLate: 'The recording could not be downloaded before the service deleted it (at {at}):',
  partialKept: 'A partial copy ({size}) is kept at {path}.',
  partialReleased: 'Its partial copy ({size}) was deleted to free the disk.',
  downloadShort:
    'The server sends less than announced ({actual} of {expected} bytes): it is downloaded again, and saved labelled shorter than announced if the server keeps sending that much.',
  diskWait:
    'Waiting for disk space in {folder}: {needed} needed, {free} free beside the other downloads and the {floor} kept free for the journal.',
  diskBelowFloor:
    'Paused: the disk of {folder} has {free} free, less than the {floor} kept free for the journal. It resumes when there is room.',
  saveFailed: 'Could not save the recording: {detail}',
  uploadRefused: '{status}: {reason}',
  gapNoCredentials: 'No credentials: missed recordings cannot be checked.',
  // Why a web client upload was refused (uploads/upload-route.ts, cors.ts, multipart.ts): nested as `reasonNote`
  uploadRefusedLocal: '{name} (local stream):',
  uploadRefusedRemote: '{name} (remote stream):',
  uploadRefusedUnnamed: 'A web client recording:',
  uploadUnknownPath: 'unknown path',
  uploadPreflightNoOrigin: 'A preflight needs an Origin header.',
  uploadMethod: 'method {method} not allowed; upload with POST',
  uploadNoOrigin:
    'No web app origin is allowed to upload yet: add it in Settings → Recordings from your web app or with `tally listen --upload-origin https://app.example`',
  uploadOriginRefused:
    'The page origin {origin} is not allowed to upload recordings; add it in Settings → Recordings from your web app.',
  uploadBusy: {
    one: '{count} upload is already in progress, the most Tally takes at once, and it is not too slow to give way; send it again in a minute.',
    other:
      '{count} uploads are already in progress, the most Tally takes at once, and none is too slow to give way; send it again in a minute.',
  },
  uploadBusyAddress: {
    one: '{count} upload from {address} is already in progress, the most Tally takes from one address, and it is not too slow to give way; send it again in a minute.',
    other:
      '{count} uploads from {address} are already in progress, the most Tally takes from one address, and none is too slow to give way; send it again in a minute.',
  },
  uploadEvicted:
    'closed to make room for another upload: {rate} over the last {seconds} s, below the {min} an upload must keep',
  uploadNoBoundary: 'The multipart Content-Type has no valid boundary.',
  uploadEmpty: 'The upload is empty.',
  uploadTooLarge: 'The recording is larger than the {limit} upload limit.',
  uploadFolderLinked:
    'The client uploads folder {folder} is a symbolic link; Tally does not write through links inside the recordings folder. Remove the link.',
  uploadDiskFull: 'The disk is full: free space in {folder}; the upload was not saved, send it again.',
  uploadDiskFullSizes:
    'The disk is full: free space in {folder} ({needed} needed, {free} free); the upload was not saved, send it again.',
  uploadNoRoom:
    'Not enough disk space in {folder} for this upload: {needed} needed, {free} free above the {floor} kept for the journal; it was not saved, send it again once there is room.',
  uploadNoRoomStreaming:
    'Not enough disk space in {folder} for the rest of this upload after {received}: {free} free above the {floor} kept for the journal; it was not saved, send it again once there is room.',
  uploadNameTaken: 'More than 9999 uploads named "{name}" already exist.',
  uploadClientGone: 'the connection closed before the upload ended',
  uploadIdle: 'nothing received for {seconds} s',
  multipartIncomplete: 'The multipart body ended before its closing boundary (incomplete upload).',
  multipartHeaders: 'A multipart part has malformed headers or more than {limit} of them.',
  multipartMalformed: 'Malformed multipart body: {detail}.',
  multipartFieldTooLarge: 'A form field is larger than {bytes} bytes.',
  multipartTwoFiles: 'Send one file per upload; this body holds more than one.',
  multipartTooManyParts: 'The multipart body has more than {parts} parts.',
  multipartNoFile: 'The multipart body holds no file part.',
  // Why new recording webhooks are refused (webhook/receiver.ts, a 503): nested as `reasonNote`
  webhooksFull: {
    one: '{count} recording is still waiting to download, the most Tally accepts; new webhooks are refused until some finish',
    other:
      '{count} recordings are still waiting to download, the most Tally accepts; new webhooks are refused until some finish',
  },
  webhookNotStored: 'the recording could not be stored ({cause}); try again',
  storeDiskFull: 'the disk of the state folder is full ({errno})',
  storeReadOnly: 'the disk of the state folder is read-only ({errno})',
  storeDiskFailed: 'the disk of the state folder failed ({errno})',
  storeOther: '{detail}',
  // Settings: connection test, keychain, recordings folder (app/app-credentials.ts, app/settings-folder-check.ts)
  connected: { one: 'Connected: {count} channel live now.', other: 'Connected: {count} channels live now.' },
  keychainUnusable: 'The OS keychain could not be used.',
  hostsChanged: 'The service hosts changed since the secret was entered, so it is not sent to them: {reenter}.',
  reenterInSettings: 'to use the new hosts, enter the secret again in Settings → Service account',
  folderUnusable: 'Recordings cannot be saved in {path}:',
  folderNoPermission: 'Tally is not allowed to write there.',
  folderReadOnly: 'The disk is read-only.',
  folderFileInWay: 'A file is in the way of that folder.',
  demoFolderRefused:
    '{folder} is the demo’s own folder, where each demo run deletes older recordings: choose another folder for real recordings.',
  folderDiskFull: 'The disk is full.',
  folderNotAllowed: 'This file system does not allow folders there.',
  folderTimeout: 'The folder did not answer in time.',
  folderOther: 'It cannot be written ({code}).',
  // Studio (app/studio-host.ts, studio/team.ts)
  studioNoReceiver: 'The receiver is not running.',
  studioReceiverDemo:
    'Demo mode: the sandbox’s recordings are not shared with the studio. This computer becomes the studio’s receiver once it uses the real service (Settings → Service account).',
  studioJetStream: {
    one: 'Connected; JetStream is on ({count} stream).',
    other: 'Connected; JetStream is on ({count} streams).',
  },
  studioServersDown: {
    one: 'Not reachable now: {servers} (the studio works while most of its servers answer).',
    other: 'Not reachable now: {servers} (the studio works while most of its servers answer).',
  },
  teamRefused: 'The team server refused the credentials: {reason} ({where}) — set them in Settings → Studio.',
  teamConnectionRefused:
    'The team server {where} is unreachable (connection refused): is nats-server running there with -js?',
  teamUnknownHost: "The team server's host {host} is unknown (DNS).",
  teamUnreachable: 'The team server {where} could not be reached: {detail}',
  studioSharesStuck: {
    one: '{count} saved recording has waited over {seconds} s to be shared with the team: {reason}',
    other: '{count} saved recordings have waited over {seconds} s to be shared with the team: {reason}',
  },
  studioClusterCannotStore:
    'the team server cannot store recordings now (on a cluster: most of its servers may be down, or a leader is being elected)',
  teamConnectionLost: 'The connection to the team server was lost; reconnecting.',
  teamNotAnswering:
    'The team server {where} stopped answering (no reply for {seconds} s); reconnecting (to another server of the list when there is one).',
  teamCannotStore: 'The team server {where} cannot store or announce recordings now: {detail}',
  teamCannotMirror:
    'The team server {where} cannot send this member announcements or recordings now, so nothing new is mirrored: {detail}',
  teamNoTls: 'The team server {where} does not offer TLS: use {fix} in Settings → Studio → Team servers.',
  teamNeedsTls: 'The team server {where} requires TLS: use {fix} in Settings → Studio → Team servers.',
  teamAsks: 'The team server asks for credentials: {reason} ({where}) — set them in Settings → Studio.',
  studioMemberTwin:
    'Another computer follows the studio as this very member right now ({name} on {host}): its state folder {folder} was copied. Give one of them its own state folder (TALLY_HOME), or delete member-id in {folder} there, and start it again.',
  studioMemberNamesake:
    'Another member also calls itself {name} ({host}): both get every recording, but the receiver cannot tell them apart; give one of them another name (--name).',
  teamNoJetStream:
    'The team server {where} runs without JetStream: start nats-server with -js (and -sd DIR, so recordings stay on disk across restarts).',
  s3KeysRefused:
    'The S3 bucket {bucket} refused the keys ({reason}): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY on this computer.',
  s3NoKeys:
    'No keys for the S3 bucket {bucket} on this computer: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE naming a profile that has them).',
  s3NoKeysProfile:
    'The AWS profile {profile} has no keys for the S3 bucket {bucket}: add them to that profile, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.',
  s3NoEndpoint:
    'The recordings are in the S3 bucket {bucket}, and {host} cannot be reached: for an S3-compatible server (Ceph, MinIO...) set TALLY_S3_ENDPOINT to its URL.',
  studioClaimedElsewhere:
    'Another receiver of the studio is downloading it: this receiver saves its copy from the team store when it is shared, or downloads it itself if that receiver stops.',
  studioFolderFull:
    'The studio folder {folder} is full: {channel} needs {needed} more and {free} are free. Free space there, or follow into another folder (--folder); the transfer resumes by itself.',
  studioMemberLagging: {
    one: 'The member {member} has {count} recording waiting, and it leaves the team server in {left}: start that member (tally follow, or its app) before then, or keep recordings longer on the receiver (--retention).',
    other:
      'The member {member} has {count} recordings waiting, and the oldest leaves the team server in {left}: start that member (tally follow, or its app) before then, or keep recordings longer on the receiver (--retention).',
  },
  studioSelfLagging: {
    one: 'This computer has {count} studio recording still to fetch, and it leaves the team server in {left}: keep Tally following until it is saved.',
    other:
      'This computer has {count} studio recordings still to fetch, and the oldest leaves the team server in {left}: keep Tally following until they are saved.',
  },
  studioFollowerNoRegister:
    "This computer follows a studio: the studio's receiver registers the webhook URL, and one registered here would take the webhooks away from it (Settings → Studio).",
  studioUrlField: 'Settings → Studio → Team servers',
  studioUrlNeeded: 'Settings → Studio → Team servers: a team server is needed, e.g. nats://studio.local:4222.',
  teamUrlNotUrl: '{flag} must be a URL such as nats://studio.local:4222, not "{input}".',
  teamUrlScheme: '{flag} must start with nats:// or tls:// (got {scheme}//).',
  teamUrlNoHost: '{flag} needs a host, as in nats://studio.local:4222.',
  teamUrlCredentials:
    '{flag} must not carry credentials: store them with "tally login --team" or set TALLY_TEAM_USER / TALLY_TEAM_PASSWORD.',
  teamUrlsMixedScheme: '{flag}: every server of a cluster takes the same scheme (all nats:// or all tls://).',
  teamJetStreamBusy:
    'The team server has not answered yet ({detail}); a server of the cluster may be down or electing a new leader. Trying again.',
  teamUrlPath: '{flag} takes no path: nats://HOST:PORT.',
  teamCredentialsIncomplete: 'Team credentials need a user and a password, or a token.',
  // Tunnel settings (tunnels/index.ts, ngrok.ts, url.ts, localtunnel.ts, unusable.ts): thrown as ConfigError
  tunnelSettingAt: 'Settings → How the service reaches Tally → {field}: {detail}',
  fieldConnection: 'Connection',
  fieldPublicUrl: 'Public URL',
  fieldStaticDomain: 'Static domain',
  fieldServer: 'Server',
  ngrokAuthtokenMissing:
    'ngrok needs an authtoken: set it in Settings → How the service reaches Tally → ngrok authtoken, or with `tally login --ngrok` (the keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
  ngrokTokenFileOpen:
    'The ngrok authtoken file {path} can be read by other users, so Tally does not use it: run `chmod 600 {path}`, or save the token again.',
  ngrokAuthtokenRefused:
    'ngrok did not accept the authtoken ({providerCode}). Copy it again from the ngrok dashboard and set it in Settings → How the service reaches Tally (ngrok authtoken) or with `tally login --ngrok`.',
  ngrokDomainRefused:
    'ngrok refused the domain {domain} ({providerCode}): it is not reserved for this account. Check the static domain in the ngrok dashboard.',
  ngrokDomainBusy:
    'The ngrok domain {domain} is already online in another session ({providerCode}). Close the other ngrok agent or Tally instance.',
  ngrokSessionLimit:
    'The ngrok account has reached its limit of simultaneous sessions ({providerCode}). Close another ngrok agent.',
  ngrokNotDomain:
    '"{domain}" is not an ngrok domain. Use the static domain from the ngrok dashboard, e.g. name.ngrok-free.app.',
  publicUrlMissing:
    'Set the Public URL in Settings → How the service reaches Tally (My own public URL), or pass it as `--tunnel https://your.host`.',
  publicUrlNotUrl: '"{url}" is not a URL. Give the public https address, e.g. https://tally.example.com.',
  publicUrlScheme: 'The public URL must start with https:// (got {scheme}).',
  publicUrlCredentials: 'The public URL must not contain a user name or password.',
  publicUrlQuery: 'The public URL must not have a query (?...) or fragment (#...).',
  publicUrlHooks:
    'Give the base address that forwards to Tally, without /hooks/...: Tally adds the webhook path itself.',
  publicUrlNowhere: '{host} is not an address anyone can connect to.',
  publicUrlNeedsHttps:
    'The public URL must use https: webhooks cross the internet. Plain http is only accepted for addresses on this computer or your local network.',
  localtunnelNotUrl: '"{url}" is not a localtunnel server URL. Use e.g. https://tunnel.example.com.',
  localtunnelScheme: 'The localtunnel server URL must start with https:// or http://.',
  localtunnelParts: 'The localtunnel server URL must not contain a user name, password, query or fragment.',
  ngrokLost: 'The connection to ngrok was lost.',
  ngrokClosedOpening: 'The ngrok tunnel was closed while it was opening.',
  ngrokNoUrl: 'ngrok opened a tunnel but reported no public URL.',
  ngrokSdkMissing: 'The ngrok SDK could not be loaded on this system: {detail}',
  ngrokFailed: 'ngrok could not open the tunnel: {detail}',
  ngrokFailedCode: 'ngrok could not open the tunnel ({providerCode}): {detail}',
  localtunnelClosedOpening: 'The localtunnel tunnel was closed while it was opening.',
  localtunnelRedirects:
    'The localtunnel server at {host} redirects to {origin}. Set that address as the server instead.',
  localtunnelAnswered: 'The localtunnel server at {host} answered {status}.',
  localtunnelAnsweredSaying: 'The localtunnel server at {host} answered {status}: {detail}.',
  localtunnelNotServer:
    'The server at {host} did not answer like a localtunnel server (expected JSON with id, port and url).',
  webhookNoUrlYet: 'There is no public webhook URL to register yet: start a tunnel first.',
  noPublicUrl: 'Choose a tunnel provider first: the service cannot reach a loopback URL.',
  shuttingDown: 'Tally is shutting down.',
  receiverCannotListen: 'The webhook receiver could not listen on {where}: {why}.',
  receiverFieldsFix: '{listen} Check receiverHost and receiverPort in settings.json.',
  receiverPortBusy: 'the port is already in use (is another Tally running?)',
  receiverNoPermission: 'permission denied',
  localtunnelUnreachable: 'Could not reach the localtunnel server at {host}: {detail}.',
  localtunnelFailed: 'The localtunnel connection failed: {detail}',
  localtunnelNoTunnel: 'The localtunnel server at {host} could not open a tunnel: {detail}',
  localtunnelSlow: 'The localtunnel server at {host} did not open a tunnel within {seconds} s.',
  // Why a connection got no answer (tunnels/http.ts): nested as `detailNote` beside the English `detail`
  netRefused: 'connection refused',
  netReset: 'connection reset',
  netUnknownHost: 'host name not found',
  netUnreachable: 'network unreachable',
  netTimeout: 'no answer within {seconds} s',
  netCancelled: 'the request was cancelled',
  netFailed: 'the connection failed ({errno})',
  // Why the service could not be reached (api-transport.ts): nested as `reasonNote` in a network error
  apiRefused: 'connection refused by {host}',
  apiUnknownHost: 'host {host} not found',
  apiLookupFailed: 'the name lookup for {host} failed temporarily',
  apiReset: 'the connection to {host} was reset',
  apiClosedSending: 'the connection to {host} closed while sending',
  apiTimedOut: 'the connection to {host} timed out',
  apiUnreachable: '{host} is unreachable from this network',
  apiClosedEarly: 'the connection to {host} closed before the whole answer arrived',
  apiTls: 'the TLS certificate of {host} was not accepted ({errno})',
  apiCutOff: 'the answer from {host} was cut off',
  apiFailedCode: 'the connection to {host} failed ({errno})',
  apiFailed: 'the connection to {host} failed',
  // Settings and folders (settings.ts, folder-check.ts), credentials (credentials.ts, app/app-credentials.ts)
  invalidSettings: 'Invalid settings: {detail}',
  invalidFields: 'check {fields}',
  folderCannotUse: 'Cannot use {folder} as {source}: {why}. Choose another folder.',
  folderSourceSettings: 'the recordings folder (Settings → Where recordings are saved)',
  /** The same folder named under its own field, where pointing at the section would point at itself. */
  folderSourceField: 'the recordings folder',
  folderTooLong: 'The path is too long.',
  folderLoops: 'The path loops through symbolic links.',
  keychainLocked:
    'The keychain is locked (the unlock prompt was dismissed or could not be shown): unlock it and try again, or set TALLY_SERVICE_ID and TALLY_SECRET.',
  keychainNoService:
    'No Secret Service is running: install and unlock gnome-keyring or KeePassXC, or set TALLY_SERVICE_ID and TALLY_SECRET.',
  keychainFailed: 'The OS keychain could not be used ({detail}). Or set TALLY_SERVICE_ID and TALLY_SECRET.',
  noCredentials:
    'No credentials: enter the service ID and secret in Settings → Service account (or set TALLY_SERVICE_ID and TALLY_SECRET).',
  keychainDamaged: 'The credentials stored in the keychain are damaged: run "tally login" again.',
  keychainNone: 'the OS keychain is not available.',
  credentialsBoth: 'Both the service ID and the secret are needed.',
  credentialsNotStorable: 'The credentials cannot be stored: {detail}',
  ngrokTokenNotStorable: 'The ngrok authtoken cannot be stored: {detail}',
  // The tray's one reason to look (app/tray-snapshot.ts)
  channelSays: '{channel}:',
  attnCredentialsRefused: 'The service refused the credentials',
  attnNotReceiving: 'Recordings are not being received',
  attnChangeNotApplied: 'A change could not be applied',
  attnRefusing: 'New recordings are being refused',
  attnUnreachable: 'The webhook URL is unreachable',
  attnTunnelError: 'The tunnel could not start',
  attnFailed: { one: '{count} recording failed', other: '{count} recordings failed' },
  // Health (receive/health.ts): each component's reason and the action to take
  healthAllOk: 'All is well: webhooks reach Tally and recordings are saved.',
  healthMemberAllOk: "All is well: the studio's recordings are mirrored here.",
  healthReceiverOk: 'Receiving webhooks on {host}:{port}.',
  healthReceiverMoved:
    'Receiving webhooks on {host}:{port} ({configured} is taken; the {provider} address follows the port).',
  healthPortHeldBy: 'Port {port} is in use by {program} (process {pid}): webhooks cannot reach Tally.',
  healthPortHeld: 'Port {port} is in use by another program: webhooks cannot reach Tally.',
  healthPortHeldByTally:
    'Port {port} is in use by another Tally ({face}, process {pid}): webhooks reach that one, not this one.',
  healthPortActionApp:
    'Stop that program, or choose another port (Settings → How the service reaches Tally → Receiver port) and forward your public URL to it. Tally keeps trying port {port}.',
  healthPortActionCli:
    'Stop that program, or run with --port <port> (or set receiverPort) and forward your public URL to it. Tally keeps trying port {port}.',
  healthPortActionTallyApp:
    'Quit that Tally (Ctrl+C where it runs, or Quit in its tray menu), or choose another port (Settings → How the service reaches Tally → Receiver port) and forward your public URL to it. Tally keeps trying port {port}.',
  healthPortActionTallyCli:
    'Quit that Tally (Ctrl+C where it runs, or Quit in its tray menu), or run with --port <port> (or set receiverPort) and forward your public URL to it. Tally keeps trying port {port}.',
  healthReceiverDown: 'The webhook receiver is not running: {reason}',
  healthReceiverStarting: 'The webhook receiver is starting.',
  healthRefusing: 'New recording webhooks are being refused: {reason}',
  healthRefusingAction:
    'Free disk space in the state folder, or let the downloads catch up: refused recordings are not sent again.',
  healthPublicOk: 'The public URL forwards to this receiver (a signed probe came back).',
  healthPublicDemo: 'Demo mode: the sandbox sends its webhooks straight to this computer.',
  healthPublicNone: 'No public URL: the service cannot reach this computer.',
  healthPublicNoneActionApp: 'Choose a tunnel or your own URL in Settings → How the service reaches Tally.',
  healthPublicNoneActionCli: 'Add --tunnel ngrok, --tunnel localtunnel or --tunnel <your https URL>.',
  healthPublicChecking: 'Checking that the public URL reaches this receiver...',
  healthPublicDown: 'The public URL does not reach this receiver: {reason}',
  healthPublicDownAction: 'Check the tunnel or the reverse proxy in front of Tally (it must forward to {host}:{port}).',
  healthPublicWaiting: 'The public path opens once the receiver listens.',
  healthRegisteredOk: 'The service sends recordings to this URL.',
  healthRegisteredBroken: 'Registered, but the public URL does not reach this receiver right now.',
  healthNotRegistered: 'Tally has not given the service this URL.',
  healthNotRegisteredActionApp:
    'Press Register in Settings → How the service reaches Tally, or turn on registering it automatically.',
  healthNotRegisteredActionCli: 'Run with --register, or paste the public URL into the service console.',
  healthRegisterFailed: 'Registering the URL with the service failed: {reason}',
  healthRegisterWaiting: 'Nothing to register until the public URL works.',
  healthRegistrationDemo: 'Demo mode: the sandbox sends to this receiver.',
  healthRegistrationMember: "Studio member: the studio's receiver holds the service's webhook.",
  healthDownloadsOk: 'No download needs attention.',
  healthDownloadsPaused: 'Downloads are paused: recordings are received and wait.',
  healthDownloadsPausedAction: 'Resume receiving in the tray menu or the popover.',
  healthDownloadsFailing: {
    one: '{count} download is failing and waits to be tried again: {reason}',
    other: '{count} downloads are failing and wait to be tried again: {reason}',
  },
  healthDownloadsUrgent: {
    one: '{count} failing download expires within the hour: {reason}',
    other: '{count} failing downloads expire within the hour: {reason}',
  },
  healthDownloadsLost: {
    one: '{count} recording failed, expired or is gone from the service (last 24 h).',
    other: '{count} recordings failed, expired or are gone from the service (last 24 h).',
  },
  healthDownloadsActionApp: 'See Problems in Recordings: Retry now, or Remove once handled.',
  healthDownloadsActionCli: 'Run "tally retry <channel>" to try again now.',
  healthDownloadsShort: {
    one: '{count} recording was saved shorter than the service announced (last 24 h): {channel}, {actual} of {expected} bytes.',
    other:
      '{count} recordings were saved shorter than the service announced (last 24 h), the first {channel}: {actual} of {expected} bytes.',
  },
  healthDownloadsShortAction: 'Compare the file with the broadcast; the server never sent the rest.',
  healthDownloadsStalled: {
    one: '{count} download has made no progress for {minutes} min.',
    other: '{count} downloads have made no progress for {minutes} min.',
  },
  healthDiskOk: '{free} free for recordings.',
  healthDiskLow: 'Only {free} free in {path}.',
  healthDiskFull: '{path} is nearly full ({free} free): downloads and new webhooks will fail.',
  healthDiskUnknown: 'The free space of {path} cannot be read: {detail}',
  healthDiskWaiting: {
    one: '{count} recording waits for space in {path}: it needs {needed}, {free} is free.',
    other: '{count} recordings wait for space in {path}: the first needs {needed}, {free} is free.',
  },
  healthUploadsNoRoom:
    'Web client uploads are refused for space in {path}: the last one needed {needed}, {free} is free above the reserve kept for the journal.',
  healthDiskAction: 'Free some space, or choose a recordings folder on another disk.',
  healthDiskNotFolder: '{path} is a file, not a folder: no recording can be saved.',
  healthDiskNotFolderActionApp: 'Move the file away, or choose another folder in Settings → Folder path.',
  healthDiskNotFolderActionCli: 'Move the file away, or start again with another --folder.',
  healthKeychainOk: 'The OS keychain is available.',
  healthKeychainMissing: 'No OS keychain: {reason}',
  healthStudioOk: "Connected to the studio's team server.",
  healthStudioConnecting: "Connecting to the studio's team server...",
  healthStudioDown: 'Studio: {reason}',
  healthStudioAction: 'Recordings are still saved here and shared once the team server answers.',
  healthMemberMissed: {
    one: '{count} recording expired from the team server before this member could mirror it.',
    other: '{count} recordings expired from the team server before this member could mirror them.',
  },
  healthMemberMissedAction:
    'They are listed under Problems; ask the receiver for them if they matter, then Remove them from the list.',
  healthMemberStudioAction:
    'Recordings already mirrored stay here; new ones are mirrored once the team server answers.',
  recordingGoneNow:
    'The service does not have this recording ({status} {detail}): it was deleted or never stored. Tally looks again now and then until its deadline.',
} satisfies Record<string, string | PluralText>;

export type NoteCode = keyof typeof NOTE_TEXT;

/** A note; `params` only when there are some, so equal notes compare equal as JSON. */
export function note(code: NoteCode, params?: NoteParams): Note {
  return params ? { code, params } : { code };
}

/** The note of a thrown error: its message, and its stable code and params when it has them (a TallyError). */
export function errorNote(error: unknown): Note {
  const { code, params, message } = (error ?? {}) as { code?: unknown; params?: unknown; message?: unknown };
  const own = typeof params === 'object' && params !== null ? (params as NoteParams) : {};
  return note('error', {
    ...own,
    message: typeof message === 'string' ? message : String(error),
    ...(typeof code === 'string' ? { errorCode: code } : {}),
  });
}

/**
 * Params that carry `inner` as a sentence inside another note: its English text under `name` (what the CLI
 * and the English popover show), its code under `<name>Note` and its own params beside them, so another
 * language puts the sentence in place translated.
 */
export function nested(name: string, inner: Note): NoteParams {
  // A thrown error's note (`error`) that names the note it was made from: that one is the sentence to translate.
  const code = inner.code === 'error' && typeof inner.params?.note === 'string' ? inner.params.note : inner.code;
  return { ...inner.params, [name]: noteText(inner), [`${name}Note`]: code };
}

/** The English text of one note. */
export function noteText(n: Note): string {
  return fillNote(NOTE_TEXT, n.code, n.params, false, 0);
}

/**
 * One note's text from another language's catalogue (core/notes-ko.ts): a sentence nested in it (`<name>Note`,
 * see `nested`) is taken from that catalogue too, in place of the English text under `<name>`.
 */
export function noteTextFrom(catalogue: Record<string, string | PluralText>, n: Note): string {
  return fillNote(catalogue, n.code, n.params, true, 0);
}

function fillNote(
  catalogue: Record<string, string | PluralText>,
  code: string,
  params: NoteParams | undefined,
  translateNested: boolean,
  depth: number,
): string {
  const template = catalogue[code];
  if (template === undefined) return String(params?.message ?? code);
  const text = typeof template === 'string' ? template : params?.count === 1 ? template.one : template.other;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const inner = params?.[`${name}Note`];
    if (
      translateNested &&
      typeof inner === 'string' &&
      inner !== code &&
      depth < 3 &&
      Object.hasOwn(catalogue, inner)
    ) {
      return fillNote(catalogue, inner, params, true, depth + 1);
    }
    const value = params?.[name];
    return value === undefined || value === null ? whole : String(value);
  });
}

/** The English text of a message made of notes, one sentence after another. */
export function notesText(notes: readonly Note[]): string {
  return notes.map(noteText).join(' ');
}

/** The English text and the notes of a message together, for the view fields that carry both. */
export function said(...notes: Note[]): { text: string; notes: Note[] } {
  return { text: notesText(notes), notes };
}
