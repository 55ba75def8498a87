import { describe, expect, it, afterEach } from 'vitest';
import { makeCore, runCleanups, tempHome } from '../../../tests/support/app/core-helpers.js';
import { openLogFile } from '../log-file.js';

afterEach(runCleanups);

describe('app:diagnostics (Settings → Advanced → Copy diagnostics)', () => {
  it("reports this face's health, journal, settings and log, with the secrets in use redacted", async () => {
    const home = await tempHome();
    const secret = 'app-env-secret-5f5f5f';
    // What the app's own log holds (main writes it; the core only reads it here).
    const log = await openLogFile({ home, name: 'serve' });
    log.warn(`an upstream error quoted ${secret} back`);
    await log.close();
    const core = await makeCore(home, { env: { ...process.env, TALLY_SECRET: secret, TALLY_SERVICE_ID: 'svc' } });
    await core.start();

    const { text } = await core.handlers['app:diagnostics']();
    expect(text).toMatch(/^Tally diagnostics, \S+ \(tally serve, Copy diagnostics\)\n/);
    expect(text).toMatch(/\n {2}tally serve: (ok|warning|error), (no problems|1 problem|\d+ problems)\n/);
    expect(text).toContain('Recordings in the journal:');
    expect(text).toContain(`"recordingsFolder": `);
    expect(text).toContain('Last lines of the serve log:');
    expect(text).toContain('an upstream error quoted [redacted] back');
    expect(text).not.toContain(secret);
  });
});
