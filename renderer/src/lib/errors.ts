import { errorCodeOf, errorMessageOf } from '../../../electron/contract.js';
import { t } from './i18n.js';

/** A message fit for the UI from anything thrown (RemoteError, Error, or a string). */
export function messageOf(error: unknown): string {
  if (error instanceof Error && error.message) return errorMessageOf(error.message);
  if (typeof error === 'string' && error) return errorMessageOf(error);
  return t('common.unknownError');
}

/** The core's stable error code of a rejected bridge call (over IPC or WebSocket), or null. */
export function codeOf(error: unknown): string | null {
  return errorCodeOf(error);
}
