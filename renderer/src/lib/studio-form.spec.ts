import { afterEach, describe, expect, it } from 'vitest';
import { setLocale } from './i18n.js';
import { teamUrlProblem, validTeamUrl } from './studio-form.js';

afterEach(() => setLocale('en'));

describe('the Team servers field', () => {
  it('refuses as the producer types what the core would refuse on Save (a port past 65535), naming the server', () => {
    const problem = teamUrlProblem('nats://127.0.0.1:14222, nats://127.0.0.1:99999');
    expect(problem).toContain('nats://127.0.0.1:99999');
    expect(validTeamUrl('nats://127.0.0.1:99999')).toBe(false);
  });

  it('takes what the core takes: one server, a cluster, no port (the default), stray commas', () => {
    for (const ok of ['nats://a.lan:4222', 'nats://a:4222, nats://b:4222,nats://c:4222', 'tls://a.lan', 'nats://a,,']) {
      expect(teamUrlProblem(ok), ok).toBeNull();
    }
  });
});
