/** Errors from the core in the popover's language, by their stable codes, keeping the specifics. */
import { errorCodeOf, errorMessageOf, errorParamsOf } from '../../../electron/contract.js';
import { locale, t, type MessageKey } from './i18n.js';
import { knownNote, localParams, noteInLocale } from './note-text.js';

/**
 * The core's stable error codes with a message of our own in every language. The core writes its messages
 * in English for the log and the CLI; the popover shows them as they are in English (they carry specifics
 * such as a host or a time) and puts its own translation in their place in other languages. Codes whose
 * message is always specific keep the core's text as a detail.
 */
const TRANSLATED: Record<string, MessageKey> = {
  bad_credentials: 'errors.badCredentials',
  unknown_channel: 'errors.unknownChannel',
  not_ended: 'errors.notEnded',
  timeout: 'errors.timeout',
  network: 'errors.network',
  service_error: 'errors.serviceError',
  response_shape: 'errors.responseShape',
  disconnected: 'errors.disconnected',
  ipc_failed: 'errors.ipcFailed',
  internal: 'errors.internal',
  disk_full: 'errors.diskFull',
  forbidden: 'errors.forbidden',
};
/**
 * Codes whose core message carries specifics the core also sends as structured params (ErrorView.params): the
 * translation puts them in place, so nothing of the English message is left. Each entry names the params the
 * message needs; without all of them the code's plain translation above is used.
 */
const WITH_PARAMS: Record<string, readonly { key: MessageKey; needs: readonly string[] }[]> = {
  unknown_channel: [{ key: 'errors.unknownChannelNamed', needs: ['channel'] }],
  not_ended: [{ key: 'errors.notEndedNamed', needs: ['channel'] }],
  service_error: [{ key: 'errors.serviceErrorAt', needs: ['status', 'endpoint'] }],
  timeout: [{ key: 'errors.timeoutAt', needs: ['endpoint', 'seconds'] }],
  // The reason (refused, unknown host...) when the core sent it as a note, else the endpoint alone.
  network: [
    { key: 'errors.networkBecause', needs: ['endpoint', 'reasonNote'] },
    { key: 'errors.networkAt', needs: ['endpoint'] },
  ],
};
const WITH_DETAIL: Record<string, MessageKey> = {
  config: 'errors.config',
  tunnel: 'errors.tunnel',
  invalid_input: 'errors.invalidInput',
  registration: 'errors.registration',
};

/** Shell-style `quotes` in core messages are for terminals; the popover shows typographic quotes. */
function tidy(message: string): string {
  return message.replace(/`([^`]+)`/g, '“$1”');
}

/** The raw text of anything thrown or pushed: an Error, a `{ code, message }` or a string. */
function rawMessage(error: unknown): string | null {
  if (typeof error === 'string') return error || null;
  if (typeof error === 'object' && error !== null) {
    const { message } = error as { message?: unknown };
    if (typeof message === 'string' && message) return errorMessageOf(message);
  }
  return null;
}

/** The service's endpoints by the name a producer knows them by, not their paths (`/lambda/…`). */
const ENDPOINT_NAMES: [RegExp, MessageKey][] = [
  [/broadcast-channel-list/, 'errors.endpoints.live'],
  [/(^|\/)search$/, 'errors.endpoints.search'],
  [/channel-force-termination/, 'errors.endpoints.end'],
  [/\/api\/recordhook\//, 'errors.endpoints.recordHook'],
  [/\/api\/webhook\//, 'errors.endpoints.channelHook'],
];

/** The endpoint param named for people, or null when it is not one of the service's known endpoints. */
function endpointName(params: Record<string, unknown> | null): string | null {
  const endpoint = params?.endpoint;
  if (typeof endpoint !== 'string') return null;
  const key = ENDPOINT_NAMES.find(([pattern]) => pattern.test(endpoint))?.[1];
  return key ? t(key) : null;
}

/** A message fit for the UI, in the popover's language, from anything thrown or pushed by the core. */
export function messageOf(error: unknown): string {
  const raw = rawMessage(error);
  const code = codeOf(error);
  // A service call that failed names what was asked ("the live channel list"), never an internal path, in
  // every language; the CLI's own message keeps the path for whoever debugs it.
  const named = code ? endpointName(errorParamsOf(error) as Record<string, unknown> | null) : null;
  if (code && named) {
    const params = { ...(errorParamsOf(error) ?? {}), endpoint: named };
    const structured = WITH_PARAMS[code]?.find(({ needs }) => needs.every((name) => name in params));
    if (structured) return t(structured.key, localParams(params));
  }
  if (code && locale() !== 'en') {
    const params = errorParamsOf(error);
    // A message the core wrote as a note (a ConfigError's, say) is said whole in this language.
    if (params && knownNote(params.note)) {
      const said = noteInLocale(params.note, params);
      const wrapper = WITH_DETAIL[code];
      return wrapper ? t(wrapper, { detail: said }) : said;
    }
    const structured = WITH_PARAMS[code]?.find(({ needs }) => params && needs.every((name) => name in params));
    if (structured && params) return t(structured.key, localParams(params));
    const own = TRANSLATED[code];
    if (own) return t(own);
    const withDetail = WITH_DETAIL[code];
    if (withDetail) return t(withDetail, { detail: raw ? tidy(raw) : '' });
  }
  return raw ? tidy(raw) : t('common.unknownError');
}

/** The core's stable error code of a rejected bridge call (over IPC or WebSocket), or null. */
export function codeOf(error: unknown): string | null {
  return errorCodeOf(error);
}
