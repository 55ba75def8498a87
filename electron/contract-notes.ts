/**
 * Core messages with a stable code (split from contract.ts, which re-exports it). Status lines, reasons and
 * test results the core sends in English for the log and the CLI also travel as notes: a code from
 * `NOTE_TEXT` and its params. The popover translates each note by its code (the English dictionary takes its
 * `notes` from here, other languages must cover every code), and falls back to the English text for a code it
 * does not know (a newer core behind `tally serve`).
 */
import { z } from 'zod';

export type NoteParams = Record<string, string | number>;

export const NoteSchema = z
  .object({
    code: z.string().min(1).max(64),
    params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  })
  .strict();

/** One sentence of a core message: its code and the specifics it names. */
export type Note = z.infer<typeof NoteSchema>;

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
  // Tunnel status (tunnels/health.ts)
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
  portInUse:
    'Port {port} is in use, so the receiver listens on another port this time: a webhook URL registered with port {port} does not reach it.',
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
  // Recording reasons (pipeline/download-queue.ts, app/recording-views.ts)
  recordingGone: 'The service deleted the recording 6 hours after the broadcast ended (at {at}).',
  recordingLate: 'The recording could not be downloaded before the service deleted it (at {at}):',
  partialKept: 'A partial copy ({size}) is kept at {path}.',
  saveFailed: 'Could not save the recording: {detail}',
  uploadRefused: '{status}: {reason}',
  gapNoCredentials: 'No credentials: missed recordings cannot be checked.',
  // Settings: connection test, keychain, recordings folder (app/app-credentials.ts, app/folder-check.ts)
  connected: { one: 'Connected: {count} channel live now.', other: 'Connected: {count} channels live now.' },
  keychainUnusable: 'The OS keychain could not be used.',
  hostsChanged: 'The service hosts changed since the secret was entered, so it is not sent to them: {reenter}.',
  reenterInSettings: 'to use the new hosts, enter the secret again in Settings → Service account',
  folderNotAbsolute: 'Enter the full path of the folder.',
  folderUnusable: 'Recordings cannot be saved in {path}:',
  folderNoPermission: 'Tally is not allowed to write there.',
  folderReadOnly: 'The disk is read-only.',
  folderFileInWay: 'A file is in the way of that folder.',
  folderDiskFull: 'The disk is full.',
  folderNotAllowed: 'This file system does not allow folders there.',
  folderTimeout: 'The folder did not answer in time.',
  folderOther: 'It cannot be written ({code}).',
  // Studio (app/studio-host.ts, studio/team.ts)
  studioNoReceiver: 'The receiver is not running.',
  studioJetStream: {
    one: 'Connected; JetStream is on ({count} stream).',
    other: 'Connected; JetStream is on ({count} streams).',
  },
  teamRefused: 'The team server refused the credentials: {reason} ({where}) — set them in Settings → Studio.',
  teamConnectionRefused:
    'The team server {where} is unreachable (connection refused): is nats-server running there with -js?',
  teamUnknownHost: "The team server's host {host} is unknown (DNS).",
  teamUnreachable: 'The team server {where} could not be reached: {detail}',
  teamNoTls: 'The team server {where} does not offer TLS: set the studio URL to {fix}.',
  teamNeedsTls: 'The team server {where} requires TLS: set the studio URL to {fix}.',
  teamAsks: 'The team server asks for credentials: {reason} ({where}) — set them in Settings → Studio.',
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

/** The English text of one note. */
export function noteText(n: Note): string {
  const template: string | PluralText | undefined = (NOTE_TEXT as Record<string, string | PluralText>)[n.code];
  if (template === undefined) return String(n.params?.message ?? n.code);
  const text = typeof template === 'string' ? template : n.params?.count === 1 ? template.one : template.other;
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = n.params?.[name];
    return value === undefined ? whole : String(value);
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
