import { t } from './i18n.js';

/** A message fit for the UI from anything thrown (RemoteError, Error, or a string). */
export function messageOf(error: unknown): string {
  if (error instanceof Error && error.message) return error.message;
  if (typeof error === 'string' && error) return error;
  return t('common.unknownError');
}
