/**
 * The redactor's two nets (core/redact.ts): patterns for secrets by their shape, and registered values, short
 * ones included; and what it must leave alone, so a log stays readable.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Redactor, redactSecrets, registerSecret } from './redact.js';

/** A redactor of each test's own: what one test registers is not there for the next. */
let redactor: Redactor;
beforeEach(() => {
  redactor = new Redactor();
});

describe('redactSecrets', () => {
  it.each([
    ['Authorization: Basic dXNlcjpodW50ZXIy', 'dXNlcjpodW50ZXIy'],
    ['authorization=Digest username="a", response="6629fae49393a05397450978507c4ef1"', '6629fae4'],
    [
      'Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/2026, Signature=fe5f80f77d5fa3beca038a248ff027',
      'fe5f80f7',
    ],
    ['GET /x.mp4?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=0123456789abcdef HTTP/1.1', '0123456789abcdef'],
    ['X-Amz-Security-Token: FQoGZXIvYXdzEJr', 'FQoGZXIvYXdzEJr'],
    ['POST /uploads/Qm9vb2Jvb2Jvb2I returned 413', 'Qm9vb2Jvb2Jvb2I'],
    ['POST /hooks/Qm9vb2Jvb2Jvb2I returned 503', 'Qm9vb2Jvb2Jvb2I'],
    ['seed SUAMK2FG4MI6UE3ACF3FK3OIQBCEIEZV7NSWFFEW63UXMRLFM2XLAXK4GY', 'SUAMK2FG4MI6UE3A'],
    ['form user=a&pass=hunter22&x=1', 'hunter22'],
    ['{"accessKeyId":"AKIAIOSFODNN7EXAMPLE","secretAccessKey":"wJalrXUtnFEMI/K7MDENG"}', 'wJalrXUtnFEMI'],
    ['{"sessionToken": "IQoJb3JpZ2luX2Vj"}', 'IQoJb3JpZ2luX2Vj'],
    ['nats://alice:s3cret-pw@10.0.0.2:4222', 's3cret-pw'],
    ['key AKIAIOSFODNN7EXAMPLE was refused', 'AKIAIOSFODNN7EXAMPLE'],
  ])('hides the secret in %s', (text, secret) => {
    const out = redactor.redact(text);
    expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
  });

  it('hides registered values wherever they are, a short one only where it stands alone', () => {
    redactor.register('plainvalue123', 'k7Q', '  ');
    expect(redactor.redact('failed near plainvalue123 and k7Q.')).toBe('failed near [redacted] and [redacted].');
    // Part of a longer word is not the secret.
    expect(redactor.redact('k7Quality stays')).toBe('k7Quality stays');
    // Percent-encoded in a URL too.
    redactor.register('a/b+c=d!');
    expect(redactor.redact('https://x.example/?v=a%2Fb%2Bc%3Dd!')).not.toContain('a%2Fb%2Bc%3Dd!');
    // Only where it was registered: another redactor (another test) does not know it.
    expect(new Redactor().redact('failed near plainvalue123')).toBe('failed near plainvalue123');
  });

  it('leaves ordinary prose alone', () => {
    for (const text of [
      'The ngrok token is empty: run "tally login --ngrok".',
      'Basic settings were saved; the token expired and was renewed.',
      'recording key=rec-1 saved to /videos/show.mp4',
      'The team password was refused by nats://10.0.0.2:4222.',
    ]) {
      expect(redactor.redact(text)).toBe(text);
    }
  });

  it('knows the secrets of the environment, TALLY_NGROK_AUTHTOKEN and AWS_SESSION_TOKEN included', () => {
    const env = { TALLY_NGROK_AUTHTOKEN: 'ngrok-env-tok', AWS_SESSION_TOKEN: 'sess-tok-99', HOME: '/home/x' };
    expect(redactor.secretsIn(env).sort()).toEqual(['ngrok-env-tok', 'sess-tok-99']);
    expect(redactor.redact('tunnel said ngrok-env-tok; s3 said sess-tok-99')).toBe(
      'tunnel said [redacted]; s3 said [redacted]',
    );
  });

  it('is one redactor for the whole process: what any reader registers, every logger hides', () => {
    registerSecret(`process-wide-${process.pid}`);
    expect(redactSecrets(`the server echoed process-wide-${process.pid} back`)).toBe(
      'the server echoed [redacted] back',
    );
  });
});
