/**
 * The team's NATS credentials: from TALLY_TEAM_USER + TALLY_TEAM_PASSWORD or TALLY_TEAM_TOKEN, else from the
 * OS keychain (one entry, through the same CredentialStore as the project secret). The keychain entry is bound
 * to the server it was stored for: it is never sent to another team URL.
 */
import { z } from 'zod';
import { note } from '../notes.js';
import { ConfigError } from '../errors.js';
import type { CredentialStore } from '../credentials.js';
import { teamCredentialsFromEnv, type TeamCredentials } from './team.js';

/** Keychain token name of the team entry. */
export const TEAM_TOKEN_NAME = 'studio-team';

const storedSchema = z.object({
  server: z.string().min(1),
  user: z.string().optional(),
  password: z.string().optional(),
  token: z.string().optional(),
});

/** `nats://host:port` as the binding of a keychain entry (tls:// and nats:// to one server are one server). */
export function serverKey(url: URL): string {
  return `${url.hostname.toLowerCase()}:${url.port || '4222'}`;
}

export async function saveTeamCredentials(store: CredentialStore, url: URL, creds: TeamCredentials): Promise<void> {
  if (!creds.token && !(creds.user && creds.password)) {
    throw new ConfigError(note('teamCredentialsIncomplete'));
  }
  await store.setToken(TEAM_TOKEN_NAME, JSON.stringify({ server: serverKey(url), ...creds }));
}

export async function clearTeamCredentials(store: CredentialStore): Promise<boolean> {
  return store.deleteToken(TEAM_TOKEN_NAME);
}

/** What a face may show: which server the stored entry is for and of which kind (never the secret). */
export async function storedTeamSummary(
  store: CredentialStore,
): Promise<{ server: string; kind: 'user' | 'token' } | null> {
  const raw = await store.getToken(TEAM_TOKEN_NAME);
  const parsed = raw === null ? null : storedSchema.safeParse(safeJson(raw));
  if (!parsed?.success) return null;
  return { server: parsed.data.server, kind: parsed.data.token ? 'token' : 'user' };
}

/**
 * Credentials for `url`: the environment wins; the keychain entry only when it was stored for this server.
 * `keychain: false` skips the keychain (a member with an open server needs none).
 */
export async function resolveTeamCredentials(
  url: URL,
  env: NodeJS.ProcessEnv,
  store: CredentialStore | null,
): Promise<TeamCredentials | null> {
  const fromEnv = teamCredentialsFromEnv(env);
  if (fromEnv || !store) return fromEnv;
  const raw = await store.getToken(TEAM_TOKEN_NAME);
  if (raw === null) return null;
  const parsed = storedSchema.safeParse(safeJson(raw));
  if (!parsed.success) {
    throw new ConfigError('The team credentials in the keychain are damaged: run "tally login --team URL" again.');
  }
  if (parsed.data.server !== serverKey(url)) return null;
  const { token, user, password } = parsed.data;
  return token ? { token } : { user: user ?? '', password: password ?? '' };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
