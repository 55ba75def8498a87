/** A tunnel provider the settings ask for but cannot have: which settings field to fix, said as a note. */
import { nested, note, noteText, type Note, type NoteCode } from '../notes.js';
import { ConfigError, type ValidationError } from '../errors.js';
import { TunnelProviderBase } from './types.js';
import type { LocalTarget, TunnelKind, TunnelOpenResult } from './types.js';

/**
 * Where each provider's settings live in the app, for a message that sends the producer to the right field:
 * a note, so the popover names the field in its own language.
 */
const FIELD_NOTE: Record<TunnelKind, NoteCode> = {
  none: 'fieldConnection',
  url: 'fieldPublicUrl',
  ngrok: 'fieldStaticDomain',
  localtunnel: 'fieldServer',
};

/** The fields' English names (checked against the Settings view by tests/architecture/messages.spec.ts). */
export const SETTINGS_FIELD = Object.fromEntries(
  Object.entries(FIELD_NOTE).map(([kind, code]) => [kind, noteText(note(code))]),
) as Record<TunnelKind, string>;

/**
 * The provider the settings ask for, when it cannot be built from them (no ngrok authtoken, a public URL that
 * is refused...). Opening it fails with that setting problem, which the supervisor shows as the tunnel's
 * `error` state without retrying. It stands in so a tunnel setting never keeps the receiver from starting:
 * webhooks on loopback, downloads and client uploads go on while the producer fixes the setting.
 */
export class UnusableTunnel extends TunnelProviderBase {
  readonly kind: TunnelKind;
  readonly problem: ConfigError;

  constructor(kind: TunnelKind, error: ConfigError | ValidationError) {
    super();
    this.kind = kind;
    // A message that already names its place in Settings is kept; others get the field they are about.
    const said: Note | string = error.note ?? error.message;
    if (error.message.includes('Settings')) {
      this.problem = new ConfigError(said);
      return;
    }
    const field = nested('field', note((FIELD_NOTE as Partial<Record<string, NoteCode>>)[kind] ?? 'fieldConnection'));
    const detail = typeof said === 'string' ? { detail: said } : nested('detail', said);
    this.problem = new ConfigError(note('tunnelSettingAt', { ...field, ...detail }));
  }

  async open(_local: LocalTarget, _signal?: AbortSignal): Promise<TunnelOpenResult> {
    throw this.problem;
  }

  async close(): Promise<void> {}
}
