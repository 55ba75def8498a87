/** Copying text from the popover: through the core's clipboard first, the browser's as the fallback. */
import type { TallyBridge } from '../../../electron/contract.js';
import { t } from './i18n.js';

/**
 * Copies through the core first (the Electron clipboard needs no permission prompt), then falls back to
 * the browser clipboard, which needs a secure context and a user gesture.
 */
export async function copyText(bridge: TallyBridge, text: string): Promise<void> {
  try {
    if ((await bridge.clipboard.write(text)).ok) return;
  } catch {
    // The core may not offer a clipboard (headless server): try the browser's.
  }
  if (!navigator.clipboard) throw new Error(t('common.noClipboard'));
  await navigator.clipboard.writeText(text);
}
