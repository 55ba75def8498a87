/**
 * What Settings → Studio and the first-run "I'm joining a studio" path share: the team URL check, the
 * credentials the two fields make, the Test answer in words, and the connection state in words.
 */
import type { StudioView, TeamCredentialsInput } from '../../../electron/contract.js';
import type { StudioStore } from '../stores/studio.svelte.js';
import { t } from './i18n.js';
import { coreText } from './notes.js';

/** The URL forms the core accepts (parseTeamUrl), checked as the producer types. */
export function validTeamUrl(url: string): boolean {
  return /^(nats|tls):\/\/[^\s/@]+$/.test(url.trim());
}

/** A user name makes it a user/password pair; without one the secret is the server's token. */
export function teamCredentials(user: string, secret: string): TeamCredentialsInput {
  return user.trim() ? { user: user.trim(), password: secret } : { token: secret };
}

/** Connects once with the stored credentials: resolves with what to show, or throws with the core's reason. */
export async function testTeamServer(studio: StudioStore, url: string): Promise<string> {
  const r = await studio.test(url.trim());
  const message = coreText(r.message, r.notes);
  if (!r.ok) throw new Error(message);
  return t('studio.testOk', { message });
}

/** The studio connection's state, with the core's reason when it has one. */
export function studioStatusText(status: StudioView['status'] | undefined): string {
  if (!status || status.state === 'off') return t('studio.status.off');
  const label = t(`studio.status.${status.state}`);
  const message = coreText(status.message, status.notes);
  return message ? `${label}: ${message}` : label;
}
