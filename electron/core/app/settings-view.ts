/**
 * The settings file (settings.ts) as the renderer sees it, and back. The contract says `null` for "not set";
 * the settings store says "absent". Runtime-only fields (`receivingPaused`) and the effective values the
 * core decides (demo mode, the demo recordings folder) are filled in by the caller.
 */
import type { SettingsPatch as ViewPatch, SettingsView } from '../../contract.js';
import type { Settings, SettingsPatch as StorePatch } from '../settings.js';

export interface EffectiveValues {
  recordingsFolder: string;
  ownRecordingsFolder: string;
  demoMode: boolean;
  receivingPaused: boolean;
}

/** Settings -> SettingsView. Nothing secret lives in Settings, and nothing beyond the view's fields leaves. */
export function toSettingsView(s: Settings, effective: EffectiveValues): SettingsView {
  return {
    recordingsFolder: effective.recordingsFolder,
    ownRecordingsFolder: effective.ownRecordingsFolder,
    pollIntervalSec: s.pollIntervalSec,
    fileNameTemplate: s.fileNameTemplate,
    concurrency: s.concurrency,
    notifications: {
      saved: s.notifications.saved,
      failed: s.notifications.failed,
      unreachable: s.notifications.unreachable,
      live: s.notifications.live,
    },
    launchAtLogin: s.launchAtLogin,
    language: s.language,
    tunnel: {
      provider: s.tunnel.provider,
      publicUrl: s.tunnel.publicUrl ?? null,
      ngrokDomain: s.tunnel.ngrokDomain ?? null,
      localtunnelHost: s.tunnel.localtunnelHost ?? null,
    },
    receiverPort: s.receiverPort,
    autoRegisterWebhook: s.autoRegisterWebhook,
    endpoints: {
      baseUrl: s.endpoints.baseUrl ?? null,
      consoleApiUrl: s.endpoints.consoleApiUrl ?? null,
      adminUrl: s.endpoints.adminUrl ?? null,
    },
    uploadOrigins: [...s.uploadOrigins],
    demoMode: effective.demoMode,
    receivingPaused: effective.receivingPaused,
    firstRunDone: s.firstRunDone,
    logLevel: s.logLevel,
    updateFeedUrl: s.updateFeedUrl,
  };
}

/** `null` or a blank string in a nested optional field means "clear it", which the store spells `undefined`. */
function clearBlanks<T extends Record<string, string | null | undefined>>(obj: T): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(obj)) {
    out[key] = value === null || (typeof value === 'string' && value.trim() === '') ? undefined : value;
  }
  return out;
}

/** A renderer patch -> a settings-store patch. `receivingPaused` is not a stored setting and is left out. */
export function toStorePatch(patch: ViewPatch): StorePatch {
  const { receivingPaused: _runtime, tunnel, endpoints, ...rest } = patch;
  const out: StorePatch = { ...rest };
  if (tunnel) out.tunnel = clearBlanks(tunnel) as StorePatch['tunnel'];
  if (endpoints) out.endpoints = clearBlanks(endpoints) as StorePatch['endpoints'];
  return out;
}
