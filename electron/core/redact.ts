/**
 * Redaction of secrets in text that is about to be logged or shown in a diagnostics report. Errors from
 * libraries can echo request bodies, headers or URLs, so every log line passes through here (at the logger,
 * core/log-file.ts), whoever wrote it.
 *
 * Two nets (issue 32): patterns for what looks like a secret wherever it comes from (credentials in headers,
 * URLs, queries and JSON), and the values themselves: every secret Tally holds is registered here by the code
 * that reads it (keychain, environment, token files, flags, generated keys), so a line that quotes one in a
 * shape no pattern knows is still blanked.
 *
 * A `Redactor` holds one such registry. The process has one (`registerSecret`, `redactSecrets`, `secretsInEnv`
 * use it): a library's error may be logged anywhere in the process, so every reader registers where every
 * logger looks. A test that needs an empty registry makes a `Redactor` of its own, or loads a fresh module
 * graph (as a new process would).
 */

/** Names of fields, headers and parameters whose value is a secret (`secretAccessKey`, `sessionToken`…). */
const SECRET_NAME =
  '[A-Za-z0-9_.-]*(?:secret|token|password|passwd|authorization|seed|nkey|signature|credential|apikey|api_key|accesskey)[A-Za-z0-9_.-]*';
const QUERY_NAME = `(?:${SECRET_NAME}|pass|pwd|sig)`;

const PATTERNS: readonly [RegExp, string][] = [
  // JSON: "secretAccessKey": "…", "password":"…", "X-Amz-Security-Token": "…".
  [new RegExp(`("${SECRET_NAME}"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*"`, 'gi'), '$1"[redacted]"'],
  // Headers: Authorization: Basic dXNl…, Bearer …, AWS4-HMAC-SHA256 Credential=…, Signature=… (the whole value).
  [/\b((?:proxy-)?authorization)(\s*[:=]\s*)(?:"[^"]*"|'[^']*'|[^\r\n,;]*)/gi, '$1$2[redacted]'],
  [/\b(secret|x-amz-security-token|x-api-key)(\s*:\s*)[^\s,;"']+/gi, '$1$2[redacted]'],
  // Digest credentials after a comma of the header: the response (a hash of the password) and the client nonce.
  [/\b(response|cnonce)="[^"]*"/gi, '$1="[redacted]"'],
  // A scheme and its credentials on their own (a header quoted without its name); "Basic" only before base64.
  [/\bbearer\s+[A-Za-z0-9._~+/-]+=*/gi, 'Bearer [redacted]'],
  [/\bBasic\s+(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{6,}={0,2}/g, 'Basic [redacted]'],
  // Queries and forms: token=…, pass=…, X-Amz-Signature=…, X-Amz-Credential=…; and percent-encoded inside a URL.
  [new RegExp(`(^|[^A-Za-z0-9_.-])(${QUERY_NAME})=([^&\\s"'#]+)`, 'gi'), '$1$2=[redacted]'],
  [new RegExp(`(${QUERY_NAME})%3D([^&\\s"'%]+)`, 'gi'), '$1%3D[redacted]'],
  // Credentials inside a URL: nats://user:password@host, https://token@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(?::[^\s/@]*)?@/gi, '$1[redacted]@'],
  // The webhook and upload paths carry their tokens: /hooks/<token>, /uploads/<token>.
  [/(\/(?:hooks|uploads)\/)[A-Za-z0-9_-]{8,}/g, '$1[redacted]'],
  // NATS nkey seeds (S + the key type: SU user, SA account, SO operator…), base32.
  [/\bS[UACNOPX][A-Z2-7]{50,}\b/g, '[redacted]'],
  // AWS access key IDs (AKIA… long-term, ASIA… session).
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/g, '[redacted]'],
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Hides `secret` in `text`. A short one only where it stands alone, so it does not blank parts of words. */
function hideValue(text: string, secret: string): string {
  if (secret.length >= 6) return text.split(secret).join('[redacted]');
  const alone = new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(secret)}(?![A-Za-z0-9])`, 'g');
  return text.replace(alone, '[redacted]');
}

/** The environment variables that hold secrets (tally login's alternatives, the S3 keys). */
const SECRET_ENV = [
  'TALLY_SECRET',
  'TALLY_TEAM_USER',
  'TALLY_TEAM_PASSWORD',
  'TALLY_TEAM_TOKEN',
  'TALLY_TEAM_NKEY',
  'TALLY_NGROK_AUTHTOKEN',
  'NGROK_AUTHTOKEN',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
];

/** Secret values (see the header) and the patterns: what passes through `redact` comes out without them. */
export class Redactor {
  /** Secret values read so far; redacted from every text that passes through here. */
  readonly #registered = new Set<string>();

  /**
   * Registers secret values read from the keychain, the environment, a file or a flag: from now on they are
   * hidden wherever they appear. Empty values are ignored; whitespace around a value is not part of it.
   */
  register(...values: readonly (string | null | undefined)[]): void {
    for (const value of values) {
      const v = value?.trim();
      if (v) this.#registered.add(v);
    }
  }

  /**
   * Hides anything that looks like a secret or token in `text`, every registered secret and every value of
   * `known` (further secrets in use), in their plain and URL-encoded spellings.
   */
  redact(text: string, known: readonly string[] = []): string {
    let out = text;
    // Values first: a pattern's "[redacted]" must not split a value so that it is no longer found.
    const values = [...new Set([...this.#registered, ...known.map((k) => k.trim()).filter(Boolean)])].sort(
      (a, b) => b.length - a.length,
    );
    for (const secret of values) {
      out = hideValue(out, secret);
      const encoded = encodeURIComponent(secret);
      if (encoded !== secret) out = hideValue(out, encoded);
    }
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
    return out;
  }

  /** The secret values set in `env`, for redaction (each is registered too: it is read). */
  secretsIn(env: NodeJS.ProcessEnv): string[] {
    const found = SECRET_ENV.map((name) => env[name]).filter(
      (v): v is string => typeof v === 'string' && v.trim() !== '',
    );
    this.register(...found);
    return found.map((v) => v.trim());
  }
}

/** This process's redactor: every reader of a secret registers with it, every log line passes through it. */
const processRedactor = new Redactor();

/** Registers secret values with this process's redactor (see `Redactor.register`). */
export function registerSecret(...values: readonly (string | null | undefined)[]): void {
  processRedactor.register(...values);
}

/** `text` without anything that looks like a secret, this process's registered ones or `known` (see `Redactor.redact`). */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  return processRedactor.redact(text, known);
}

/** The secret values set in `env`, registered with this process's redactor (see `Redactor.secretsIn`). */
export function secretsInEnv(env: NodeJS.ProcessEnv): string[] {
  return processRedactor.secretsIn(env);
}
