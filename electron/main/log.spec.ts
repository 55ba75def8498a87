import { describe, expect, it } from 'vitest';
import { describeError, redactSecrets } from './log.js';

describe('redactSecrets', () => {
  it('hides secrets in JSON bodies, query strings, headers and bearer tokens', () => {
    const text = [
      '{"serviceId":"svc","secret":"hunter2"}',
      'https://x.example/hook?token=tok123&a=1',
      'secret: s3cr3t',
      'Authorization: Bearer abc.def.ghi',
      '"authtoken": "ngrok-tok"',
    ].join('\n');
    const out = redactSecrets(text);
    for (const leaked of ['hunter2', 'tok123', 's3cr3t', 'abc.def.ghi', 'ngrok-tok']) expect(out).not.toContain(leaked);
    expect(out).toContain('"serviceId":"svc"');
    expect(out).toContain('a=1');
  });

  it('describes an error with its stack, redacted', () => {
    const out = describeError(new Error('POST failed: {"secret":"hunter2"}'));
    expect(out).toContain('POST failed');
    expect(out).toContain('at ');
    expect(out).not.toContain('hunter2');
    expect(describeError('plain secret=x1')).toBe('plain secret=[redacted]');
  });
});
