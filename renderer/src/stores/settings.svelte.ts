/**
 * Settings, credentials status and tunnel status. Every change is checked against the contract's own
 * schema before it is sent, so most mistakes are reported beside the field without a round trip.
 */
import {
  SettingsPatchSchema,
  type CheckResult,
  type CredentialsInput,
  type CredentialsStatus,
  type SettingsPatch,
  type SettingsView,
  type RequestMap,
  type TallyBridge,
  type TunnelStatus,
} from '../../../electron/contract.js';
import { copyText } from '../lib/clipboard.js';
import { messageOf } from '../lib/errors.js';

/** Outcome of a change: null when saved, else the message to show beside the field. */
export type UpdateResult = { ok: true } | { ok: false; error: string; invalid: boolean };

/** Checks a patch with the contract's schema; returns the first problem or null. */
export function validatePatch(patch: SettingsPatch): string | null {
  const parsed = SettingsPatchSchema.safeParse(patch);
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'Invalid value');
}

export class SettingsStore {
  settings = $state.raw<SettingsView | null>(null);
  credentials = $state.raw<CredentialsStatus | null>(null);
  tunnel = $state.raw<TunnelStatus | null>(null);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<string | null>(null);

  constructor(private readonly bridge: TallyBridge) {}

  start(): () => void {
    const offs = [
      this.bridge.on('settings:changed', (s) => (this.settings = s)),
      this.bridge.on('credentials:changed', (c) => (this.credentials = c)),
      this.bridge.on('tunnel:status', (t) => (this.tunnel = t)),
    ];
    void this.load();
    return () => offs.forEach((off) => off());
  }

  async load(): Promise<void> {
    try {
      const [settings, credentials, tunnel] = await Promise.all([
        this.bridge.settings.get(),
        this.bridge.credentials.status(),
        this.bridge.tunnel.status(),
      ]);
      this.settings = settings;
      this.credentials = credentials;
      this.tunnel = tunnel;
      this.status = 'ready';
      this.error = null;
    } catch (error) {
      this.error = messageOf(error);
      this.status = 'error';
    }
  }

  async update(patch: SettingsPatch): Promise<UpdateResult> {
    const problem = validatePatch(patch);
    if (problem) return { ok: false, error: problem, invalid: true };
    try {
      this.settings = await this.bridge.settings.update(patch);
      return { ok: true };
    } catch (error) {
      return { ok: false, error: messageOf(error), invalid: false };
    }
  }

  async chooseFolder(): Promise<void> {
    const updated = await this.bridge.settings.chooseFolder();
    if (updated) this.settings = updated;
  }

  async saveCredentials(input: CredentialsInput): Promise<void> {
    this.credentials = await this.bridge.credentials.set(input);
  }

  async clearCredentials(): Promise<void> {
    this.credentials = await this.bridge.credentials.clear();
  }

  /** Asks the core whether recordings can be saved in `path` (it creates the folder and writes a probe). */
  checkFolder(path: string): Promise<CheckResult> {
    return this.bridge.settings.checkFolder(path);
  }

  /** Stores the ngrok authtoken in the keychain through the core; it never comes back. */
  async saveNgrokToken(token: string): Promise<void> {
    this.credentials = await this.bridge.credentials.setNgrokToken(token);
  }

  async clearNgrokToken(): Promise<void> {
    this.credentials = await this.bridge.credentials.clearNgrokToken();
  }

  /** Tests the typed credentials when given, else the stored ones. */
  testCredentials(input?: CredentialsInput): Promise<RequestMap['credentials:test']['result']> {
    return input ? this.bridge.credentials.test(input) : this.bridge.credentials.test();
  }

  async registerWebhook(): Promise<void> {
    this.tunnel = await this.bridge.webhook.register();
  }

  copy(text: string): Promise<void> {
    return copyText(this.bridge, text);
  }

  /** Settings → Advanced → Copy diagnostics: the core's redacted report, onto the clipboard. */
  async copyDiagnostics(): Promise<void> {
    const { text } = await this.bridge.app.diagnostics();
    await copyText(this.bridge, text);
  }
}
