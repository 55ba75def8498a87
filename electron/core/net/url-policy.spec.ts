import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DEFAULT_DOWNLOAD_ORIGINS } from '../endpoints.js';
import { ValidationError } from '../errors.js';
import { AddressRefusedError, DownloadOriginPolicy, classifyAddress } from './url-policy.js';
import type { LookupFunction, Resolver } from './url-policy.js';

const s3 = new DownloadOriginPolicy(['https://s3.amazonaws.com', 'https://*.s3.amazonaws.com']);

function reason(policy: DownloadOriginPolicy, url: string): string {
  const result = policy.check(url);
  if (result.ok) throw new Error(`expected ${url} to be refused`);
  return result.reason;
}

/** Runs a policy lookup and returns what its callback got. */
function runLookup(
  lookup: LookupFunction,
  hostname: string,
  options: { all?: boolean; family?: number } = {},
): Promise<{ error: NodeJS.ErrnoException | null; address?: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve) => {
    (lookup as (...args: unknown[]) => void)(
      hostname,
      options,
      (error: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) =>
        resolve({ error, address, family }),
    );
  });
}

/** A fake DNS that answers every name with fixed addresses (a rebinding attacker's authoritative server). */
function fixedResolver(addresses: string[]): Resolver {
  return (_hostname, _options, callback) =>
    process.nextTick(
      callback,
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
}

describe('DownloadOriginPolicy.fromEnv', () => {
  it('defaults to the documented download origin', () => {
    const policy = DownloadOriginPolicy.fromEnv({});
    expect(policy.origins).toEqual([...DEFAULT_DOWNLOAD_ORIGINS]);
    expect(policy.check('https://s3.amazonaws.com/svc/rand/ch.mp4').ok).toBe(true);
  });

  it('prefers the environment over the fallback, and the fallback over the default', () => {
    const env = { TALLY_DOWNLOAD_ORIGINS: ' https://a.example.com , https://*.b.example.com:8443 ' };
    expect(DownloadOriginPolicy.fromEnv(env, ['https://c.example.com']).origins).toEqual([
      'https://a.example.com',
      'https://*.b.example.com:8443',
    ]);
    expect(DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: ' ' }, ['https://c.example.com']).origins).toEqual([
      'https://c.example.com',
    ]);
    expect(DownloadOriginPolicy.fromEnv({}, null).origins).toEqual([...DEFAULT_DOWNLOAD_ORIGINS]);
  });

  it.each([
    ['ftp://files.example.com', /only http and https/],
    ['https://example.com/path', /no path/],
    ['https://example.com?x=1', /no path/],
    ['https://user:pw@example.com', /user name or password/],
    ['https://*.10.0.0.1', /IP address|not a URL/],
    ['https://*.com', /two labels/],
    ['https://a.*.example.com', /first label/],
    ['not a url', /not a URL/],
  ])('rejects the origin %s with a clear message', (entry, message) => {
    const attempt = (): DownloadOriginPolicy => DownloadOriginPolicy.fromEnv({ TALLY_DOWNLOAD_ORIGINS: entry });
    expect(attempt).toThrow(ValidationError);
    expect(attempt).toThrow(message);
    expect(attempt).toThrow(/TALLY|origin/i);
  });

  it('treats a trailing slash on an origin as the bare origin', () => {
    expect(new DownloadOriginPolicy(['https://example.com/']).check('https://example.com/a.mp4').ok).toBe(true);
  });
});

describe('DownloadOriginPolicy.check', () => {
  it('accepts allowed origins and returns the parsed URL', () => {
    const result = s3.check('https://S3.AmazonAWS.com:443/svc/r/ch.mp4?X-Amz-Signature=abc');
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.url.href).toBe('https://s3.amazonaws.com/svc/r/ch.mp4?X-Amz-Signature=abc');
    expect(s3.check(new URL('https://bucket.s3.amazonaws.com/k.mp4')).ok).toBe(true);
    expect(s3.check('https://my.dotted.bucket.s3.amazonaws.com/k.mp4').ok).toBe(true);
  });

  it('matches wildcards only on a label boundary and never lets a suffix trick through', () => {
    expect(reason(s3, 'https://s3.amazonaws.com.evil.com/x.mp4')).toMatch(/not an allowed download origin/);
    expect(reason(s3, 'https://evils3.amazonaws.com/x.mp4')).toMatch(/not an allowed download origin/);
    expect(reason(s3, 'https://amazonaws.com/x.mp4')).toMatch(/not an allowed/);
    const wildOnly = new DownloadOriginPolicy(['https://*.s3.amazonaws.com']);
    expect(reason(wildOnly, 'https://s3.amazonaws.com/x.mp4')).toMatch(/not an allowed/);
    expect(reason(s3, 'https://s3.amazonaws.com@evil.com/x.mp4')).toMatch(/user name/);
  });

  it('normalises default ports but keeps other ports distinct', () => {
    const withPort = new DownloadOriginPolicy(['https://files.example.com:8443']);
    expect(withPort.check('https://files.example.com:8443/a').ok).toBe(true);
    expect(withPort.check('https://files.example.com/a').ok).toBe(false);
    expect(s3.check('https://s3.amazonaws.com:8443/a').ok).toBe(false);
    expect(new DownloadOriginPolicy(['https://h.example.com:443']).check('https://h.example.com/a').ok).toBe(true);
  });

  it('allows plain http only for an http origin with the same host and port', () => {
    expect(reason(s3, 'http://s3.amazonaws.com/x.mp4')).toMatch(/plain http is not allowed/);
    const http = new DownloadOriginPolicy(['http://media.example.com:8080']);
    expect(http.check('http://media.example.com:8080/x').ok).toBe(true);
    expect(http.check('http://media.example.com/x').ok).toBe(false);
    expect(http.check('https://media.example.com:8080/x').ok).toBe(false);
  });

  it.each([
    ['file:///etc/passwd', /file: URLs are never downloaded/],
    ['data:video/mp4;base64,AAAA', /data: URLs/],
    ['javascript:alert(1)', /javascript: URLs/],
    ['ftp://s3.amazonaws.com/x', /ftp: URLs/],
    ['https://user:pass@s3.amazonaws.com/x.mp4', /user name or password/],
    ['https://user@s3.amazonaws.com/x.mp4', /user name or password/],
    ['/relative/path.mp4', /not a valid absolute URL/],
    [`https://s3.amazonaws.com/${'a'.repeat(9000)}`, /longer than/],
  ])('refuses %s', (url, message) => {
    expect(reason(s3, url)).toMatch(message);
  });

  it.each([
    ['http://127.0.0.1/x', 'loopback'],
    ['http://127.1/x', 'loopback'],
    ['http://2130706433/x', 'loopback'],
    ['http://0x7f.0.0.1/x', 'loopback'],
    ['http://017700000001/x', 'loopback'],
    ['http://%31%32%37.0.0.1/x', 'loopback'],
    ['http://0/x', 'unspecified'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['http://10.1.2.3/x', 'private'],
    ['http://172.16.0.1/x', 'private'],
    ['http://192.168.1.1/x', 'private'],
    ['http://100.64.0.1/x', 'shared'],
    ['http://[::1]/x', 'loopback'],
    ['http://[::]/x', 'unspecified'],
    ['http://[fe80::1]/x', 'link-local'],
    ['http://[fd00::1]/x', 'private'],
    ['http://[::ffff:127.0.0.1]/x', 'loopback'],
    ['http://[0:0:0:0:0:ffff:7f00:1]/x', 'loopback'],
    ['http://[::ffff:169.254.169.254]/x', 'link-local'],
    ['http://[::ffff:10.0.0.1]/x', 'private'],
    ['http://[64:ff9b::a9fe:a9fe]/x', 'link-local'],
    ['http://[2002:7f00:1::]/x', 'loopback'],
  ])('refuses the IP literal in %s as %s', (url, category) => {
    expect(reason(s3, url)).toContain(category);
  });

  it('allows an internal IP literal only when exactly that origin is listed', () => {
    const local = new DownloadOriginPolicy(['http://127.0.0.1:4567', 'http://[::1]:4567']);
    expect(local.check('http://127.0.0.1:4567/rec.mp4').ok).toBe(true);
    expect(local.check('http://[::1]:4567/rec.mp4').ok).toBe(true);
    expect(reason(local, 'http://127.0.0.1:4568/rec.mp4')).toMatch(/loopback/);
    expect(reason(local, 'http://127.0.0.2:4567/rec.mp4')).toMatch(/loopback/);
    expect(reason(local, 'https://127.0.0.1:4567/rec.mp4')).toMatch(/loopback/);
    expect(reason(local, 'http://[::ffff:127.0.0.1]:4567/rec.mp4')).toMatch(/loopback/);
  });

  it('accepts public IP literals only when listed like any other origin', () => {
    expect(reason(s3, 'https://52.216.0.1/x')).toMatch(/not an allowed/);
    expect(new DownloadOriginPolicy(['https://52.216.0.1']).check('https://52.216.0.1/x').ok).toBe(true);
  });
});

describe('DownloadOriginPolicy.checkRedirect', () => {
  it('resolves relative locations and re-checks the target', () => {
    const from = new URL('https://s3.amazonaws.com/svc/r/ch.mp4');
    const relative = s3.checkRedirect(from, '/svc/other/ch.mp4');
    expect(relative.ok && relative.url.href).toBe('https://s3.amazonaws.com/svc/other/ch.mp4');
    expect(s3.checkRedirect(from, 'https://bucket.s3.amazonaws.com/ch.mp4').ok).toBe(true);
  });

  it('refuses redirects to internal addresses, other origins, other schemes and plain http', () => {
    const from = new URL('https://s3.amazonaws.com/x.mp4');
    const refusals = [
      'http://169.254.169.254/latest/meta-data/',
      'https://evil.example.com/x.mp4',
      'file:///etc/passwd',
      'http://s3.amazonaws.com/x.mp4',
      'http://[::1]/',
      'https://u:p@s3.amazonaws.com/x.mp4',
    ];
    for (const location of refusals) {
      const result = s3.checkRedirect(from, location);
      expect(result.ok, location).toBe(false);
      if (!result.ok) expect(result.reason).toMatch(/^redirect/);
    }
    const both = new DownloadOriginPolicy(['https://m.example.com', 'http://m.example.com']);
    const downgrade = both.checkRedirect(new URL('https://m.example.com/a'), 'http://m.example.com/a');
    expect(downgrade.ok ? 'allowed' : downgrade.reason).toMatch(/https to plain http/);
  });
});

describe('DownloadOriginPolicy.lookup', () => {
  it('refuses localhost through real DNS unless it is explicitly allowed', async () => {
    const plain = new DownloadOriginPolicy(['https://s3.amazonaws.com', 'https://*.example.com']);
    const refused = await runLookup(plain.lookup, 'localhost', { all: true });
    expect(refused.error).toBeInstanceOf(AddressRefusedError);
    expect(refused.error?.message).toMatch(/Refused to connect to localhost/);

    const allowed = new DownloadOriginPolicy(['http://localhost:8080']);
    const ok = await runLookup(allowed.lookup, 'localhost', { all: true });
    expect(ok.error).toBeNull();
    const real = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup('localhost', { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
    );
    expect(real.length).toBeGreaterThan(0);
    expect((ok.address as LookupAddress[]).map((a) => a.address).sort()).toEqual(real.map((a) => a.address).sort());
  });

  it('an explicitly listed public name resolving to loopback is still refused (only literals or localhost)', async () => {
    const policy = new DownloadOriginPolicy(['https://media.example.com'], { resolver: fixedResolver(['127.0.0.1']) });
    const result = await runLookup(policy.lookup, 'media.example.com', {});
    expect(result.error).toBeInstanceOf(AddressRefusedError);
    expect(result.error?.message).toMatch(/127\.0\.0\.1, a loopback address/);
  });

  it('defeats DNS rebinding: an allowed wildcard name answering with internal addresses is refused', async () => {
    for (const address of ['127.0.0.1', '169.254.169.254', '10.0.0.5', '::1', 'fe80::1', '::ffff:192.168.0.1']) {
      const policy = new DownloadOriginPolicy(['https://*.s3.amazonaws.com'], { resolver: fixedResolver([address]) });
      const result = await runLookup(policy.lookup, 'bucket.s3.amazonaws.com', {});
      expect(result.error, address).toBeInstanceOf(AddressRefusedError);
      expect(result.error?.message).toContain(address);
      expect(result.error?.message).toContain('bucket.s3.amazonaws.com');
    }
  });

  it('drops internal answers but keeps public ones, in both callback forms', async () => {
    const policy = new DownloadOriginPolicy(['https://*.s3.amazonaws.com'], {
      resolver: fixedResolver(['10.0.0.1', '52.216.1.2', '2600:1f18::1']),
    });
    const all = await runLookup(policy.lookup, 'b.s3.amazonaws.com', { all: true });
    expect((all.address as LookupAddress[]).map((a) => a.address)).toEqual(['52.216.1.2', '2600:1f18::1']);
    const one = await runLookup(policy.lookup, 'b.s3.amazonaws.com', {});
    expect([one.address, one.family]).toEqual(['52.216.1.2', 4]);
    const legacy = await new Promise<string>((resolve) =>
      (policy.lookup as (h: string, cb: (e: unknown, a: string) => void) => void)('b.s3.amazonaws.com', (_e, a) =>
        resolve(a),
      ),
    );
    expect(legacy).toBe('52.216.1.2');
  });

  it('refuses names no rule covers without resolving them', async () => {
    let asked = false;
    const policy = new DownloadOriginPolicy(['https://s3.amazonaws.com'], {
      resolver: (_h, _o, callback) => {
        asked = true;
        callback(null, [{ address: '52.216.1.2', family: 4 }]);
      },
    });
    const result = await runLookup(policy.lookup, 'evil.example.com', {});
    expect(result.error).toBeInstanceOf(AddressRefusedError);
    expect(asked).toBe(false);
  });

  it('lets an explicitly listed IP literal through the lookup of that literal', async () => {
    const policy = new DownloadOriginPolicy(['http://127.0.0.1:9']);
    const result = await runLookup(policy.lookup, '127.0.0.1', {});
    expect(result.error).toBeNull();
    expect(result.address).toBe('127.0.0.1');
  });

  it('lookupFor binds the lookup to one URL and works as an http.Agent lookup', async () => {
    const server = createServer((_req, res) => res.end('hello'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const fetchVia = (policy: DownloadOriginPolicy, url: URL): Promise<string> =>
        new Promise((resolve, reject) => {
          const req = get(url, { lookup: policy.lookupFor(url), family: 4, agent: false }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve(body));
          });
          req.on('error', reject);
        });
      const url = new URL(`http://localhost:${port}/`);
      const allowed = new DownloadOriginPolicy([`http://localhost:${port}`]);
      await expect(fetchVia(allowed, url)).resolves.toBe('hello');
      const wildcard = new DownloadOriginPolicy([`http://*.example.com:${port}`]);
      await expect(fetchVia(wildcard, url)).rejects.toThrow(/Refused to connect to localhost/);
      const other = allowed.lookupFor(url);
      const mismatch = await runLookup(other, 'evil.example.com', {});
      expect(mismatch.error).toBeInstanceOf(AddressRefusedError);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', null],
    ['2606:4700::1111', null],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['fe80::abcd%eth0', 'link-local'],
    ['::7f00:1', 'loopback'],
    ['172.32.0.1', null],
    ['not-an-ip', 'reserved'],
  ])('%s is %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });
});
