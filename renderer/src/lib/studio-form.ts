/**
 * What Settings → Studio and the first-run "I'm joining a studio" path share: the team URL check, the
 * credentials the two fields make, the Test answer in words, and the connection state in words.
 */
import type { StudioView, TeamCredentialsInput } from '../../../electron/contract.js';
import type { StudioStore } from '../stores/studio.svelte.js';
import { t } from './i18n.js';
import { coreText } from './notes.js';

const SERVER = /^(nats|tls):\/\/[^\s/@,]+$/;

/**
 * What is wrong with the team servers field as the producer types it (the forms the core's parseTeamUrls
 * accepts: one server, or a cluster's servers separated by commas, all of one scheme), naming the field;
 * null when it is fine or still empty.
 */
export function teamUrlProblem(text: string): string | null {
  const servers = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const field = t('studio.url');
  const bad = servers.find((s) => !wellFormed(s));
  if (bad !== undefined) return t('studio.urlInvalid', { field, server: bad });
  if (new Set(servers.map((s) => s.slice(0, 4))).size > 1) return t('studio.urlMixed', { field });
  return null;
}

/**
 * One server as the core's parseTeamUrl takes it: the shape, then the same URL parser (the WHATWG one, in the
 * browser as in Node), so what the field accepts the core accepts too (a port past 65535 is refused by both).
 */
function wellFormed(server: string): boolean {
  if (!SERVER.test(server)) return false;
  try {
    const url = new URL(server);
    return url.hostname !== '' && !url.username && !url.password && (url.pathname === '' || url.pathname === '/');
  } catch {
    return false;
  }
}

/** A team servers field the core will take: at least one server, each well formed. */
export function validTeamUrl(text: string): boolean {
  return text.trim() !== '' && teamUrlProblem(text) === null;
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
