/**
 * Redaction of secrets in text that is about to be logged or shown in a diagnostics report. Errors from
 * libraries can echo request bodies, headers or URLs, so every log line passes through here (at the logger,
 * core/log-file.ts), whoever wrote it.
 */

/** Hides anything that looks like a secret or token in `text`, and every value of `known` (the secrets in use). */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text
    .replace(/("(?:secret|token|password|authorization|authtoken)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, '$1"[redacted]"')
    .replace(/\b(secret|token|password|authtoken)=([^&\s"']+)/gi, '$1=[redacted]')
    // The same in a percent-encoded URL (a query inside another URL, a request line in an error).
    .replace(/(secret|token|password|authtoken)%3D([^&\s"'%]+)/gi, '$1%3D[redacted]')
    .replace(/\b(secret|authorization)(\s*:\s*)(?:bearer\s+)?[^\s,;"']+/gi, '$1$2[redacted]')
    .replace(/\bbearer\s+[A-Za-z0-9._~+/-]+=*/gi, 'Bearer [redacted]')
    // Credentials inside a URL: nats://user:password@host, https://token@host.
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(?::[^\s/@]*)?@/gi, '$1[redacted]@')
    // The webhook path carries its token: /hooks/<token>.
    .replace(/(\/hooks\/)[A-Za-z0-9_-]{8,}/g, '$1[redacted]');
  // Short values would blank out ordinary words; secrets in use are long.
  for (const secret of known) if (secret.length >= 6) out = out.split(secret).join('[redacted]');
  return out;
}

/** The environment variables that hold secrets (tally login's alternatives). */
const SECRET_ENV = [
  'TALLY_SECRET',
  'TALLY_TEAM_PASSWORD',
  'TALLY_TEAM_TOKEN',
  'NGROK_AUTHTOKEN',
  'AWS_SECRET_ACCESS_KEY',
];

/** The secret values set in `env`, for redaction. */
export function secretsInEnv(env: NodeJS.ProcessEnv): string[] {
  return SECRET_ENV.map((name) => env[name]).filter((v): v is string => typeof v === 'string' && v !== '');
}
