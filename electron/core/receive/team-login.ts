/**
 * The team server's credentials in the keychain, as the faces keep them for a studio (`tally login --team`,
 * `tally logout --team` / `--all`): one entry, bound to the server it was stored for, read by the publisher of a
 * studio's receiver and by the member service. The faces reach the studio's keychain entry only through here.
 */
import type { CredentialStore } from '../credentials.js';
import { clearTeamCredentials, saveTeamCredentials, serverKey, TEAM_TOKEN_NAME } from '../studio/team-credentials.js';
import { parseTeamUrl, type TeamCredentials } from '../studio/team.js';

/** The keychain token name of the team entry (what `tally logout --all` removes beside the ngrok authtoken). */
export const TEAM_LOGIN_TOKEN: string = TEAM_TOKEN_NAME;

/** A team server's credentials: a user and password, or a token. */
export type TeamLogin = TeamCredentials;

/**
 * Reads `--team URL` (one server: nats:// or tls://).
 * @throws ConfigError naming the flag, fit for a usage error.
 */
export function teamLoginUrl(input: string): URL {
  return parseTeamUrl(input);
}

/** Stores `login` for the server `url` names (replacing any entry); answers the server as the entry names it. */
export async function saveTeamLogin(keychain: CredentialStore, url: URL, login: TeamLogin): Promise<string> {
  await saveTeamCredentials(keychain, url, login);
  return serverKey(url);
}

/** Removes the team entry; answers whether there was one. */
export function forgetTeamLogin(keychain: CredentialStore): Promise<boolean> {
  return clearTeamCredentials(keychain);
}
