import { describe, expect, it } from 'vitest';
import { ConfigError, ValidationError } from '../errors.js';
import { createTunnelProvider, parseTunnelFlag, tunnelProviderFor } from './index.js';
import { LocalTunnel } from './localtunnel.js';
import { NgrokTunnel } from './ngrok.js';
import { NoTunnel } from './none.js';
import { UrlTunnel, validatePublicUrl } from './url.js';

describe('validatePublicUrl', () => {
  it('accepts https and strips the trailing slash, keeping a path prefix', async () => {
    expect(validatePublicUrl('https://tally.example.com/')).toEqual({ url: 'https://tally.example.com' });
    expect(validatePublicUrl(' https://box.tail1234.ts.net/tally/ ')).toEqual({
      url: 'https://box.tail1234.ts.net/tally',
    });
    expect(validatePublicUrl('https://tally.example.com:8443')).toEqual({ url: 'https://tally.example.com:8443' });
    expect(await new UrlTunnel('https://tally.example.com/').open({ host: '127.0.0.1', port: 1 })).toEqual({
      publicBaseUrl: 'https://tally.example.com',
    });
  });

  it('accepts plain http only for loopback or LAN hosts, with a warning', () => {
    expect(validatePublicUrl('http://127.0.0.1:8080').warning).toMatch(
      /^Plain http on 127\.0\.0\.1:8080: only this computer/,
    );
    expect(validatePublicUrl('http://localhost:8080').warning).toMatch(/only this computer/);
    expect(validatePublicUrl('http://192.168.1.20:8080').warning).toMatch(/only your local network/);
    expect(validatePublicUrl('http://[fd00::1]:8080').warning).toMatch(/only your local network/);
    expect(validatePublicUrl('http://100.101.102.103').warning).toMatch(/local network/);
    expect(validatePublicUrl('http://nas.local').warning).toMatch(/local network/);
    expect(validatePublicUrl('https://10.0.0.5').warning).toBe(
      '10.0.0.5 is on your local network: the service on the internet cannot reach it.',
    );
    expect(() => validatePublicUrl('http://tally.example.com')).toThrow(/must use https/);
    expect(() => validatePublicUrl('http://8.8.8.8')).toThrow(/must use https/);
  });

  it('refuses credentials, queries, fragments, other schemes, the webhook path and unusable hosts', () => {
    const cases: [string, RegExp][] = [
      ['https://user:pw@tally.example.com', /user name or password/],
      ['https://tally.example.com/?a=1', /query/],
      ['https://tally.example.com/#x', /fragment/],
      ['https://tally.example.com/?', /query/],
      ['ftp://tally.example.com', /must start with https/],
      ['tally.example.com', /is not a URL/],
      ['https://tally.example.com/hooks/abc', /without \/hooks/],
      ['https://0.0.0.0', /not an address anyone can connect to/],
    ];
    for (const [value, message] of cases) {
      expect(() => validatePublicUrl(value), value).toThrow(message);
      expect(() => validatePublicUrl(value), value).toThrow(ValidationError);
    }
  });
});

describe('parseTunnelFlag', () => {
  it('reads provider names and public URLs', () => {
    expect(parseTunnelFlag('none')).toEqual({ provider: 'none' });
    expect(parseTunnelFlag('NGROK')).toEqual({ provider: 'ngrok' });
    expect(parseTunnelFlag('localtunnel')).toEqual({ provider: 'localtunnel' });
    expect(parseTunnelFlag('lt')).toEqual({ provider: 'localtunnel' });
    expect(parseTunnelFlag('https://tally.example.com/')).toEqual({
      provider: 'url',
      publicUrl: 'https://tally.example.com',
    });
  });

  it('explains a wrong value', () => {
    expect(() => parseTunnelFlag('cloudflare')).toThrow(
      new ValidationError(
        ['--tunnel'],
        'Unknown tunnel "cloudflare". Use none, ngrok, localtunnel or a public https URL.',
      ),
    );
    expect(() => parseTunnelFlag('url')).toThrow(/Give the public URL itself/);
    expect(() => parseTunnelFlag('http://tally.example.com')).toThrow(/must use https/);
  });
});

describe('createTunnelProvider', () => {
  it('builds each provider from settings', () => {
    expect(createTunnelProvider({ provider: 'none' })).toBeInstanceOf(NoTunnel);
    expect(createTunnelProvider({ provider: 'url', publicUrl: 'https://t.example.com' })).toBeInstanceOf(UrlTunnel);
    const lt = createTunnelProvider({ provider: 'localtunnel', localtunnelHost: 'https://lt.example.com/' });
    expect(lt).toBeInstanceOf(LocalTunnel);
    expect((lt as LocalTunnel).host).toBe('https://lt.example.com');
    const ngrok = createTunnelProvider(
      { provider: 'ngrok', ngrokDomain: 'a.ngrok-free.app' },
      { ngrokAuthtoken: 'tok' },
    );
    expect(ngrok).toBeInstanceOf(NgrokTunnel);
    expect((ngrok as NgrokTunnel).domain).toBe('a.ngrok-free.app');
  });

  it('says what is missing', () => {
    expect(() => createTunnelProvider({ provider: 'url' })).toThrow(ConfigError);
    expect(() => createTunnelProvider({ provider: 'url', publicUrl: null })).toThrow(
      /Set the Public URL in Settings → How the service reaches Tally \(My own public URL\)/,
    );
    expect(() => createTunnelProvider({ provider: 'ngrok' }, { ngrokAuthtoken: null })).toThrow(
      'ngrok needs an authtoken: set it in Settings → How the service reaches Tally → ngrok authtoken, or with `tally login --ngrok` (the keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
    );
    expect(() => createTunnelProvider({ provider: 'localtunnel', localtunnelHost: 'lt.example.com' })).toThrow(
      ConfigError,
    );
    expect(() => createTunnelProvider({ provider: 'carrier-pigeon' as 'none' })).toThrow(/Unknown tunnel provider/);
  });
});

describe('tunnelProviderFor', () => {
  const local = { host: '127.0.0.1', port: 9 };
  const problem = async (settings: Parameters<typeof tunnelProviderFor>[0], deps = {}) => {
    const provider = tunnelProviderFor(settings, deps);
    const error: unknown = await provider.open(local).catch((e: unknown) => e);
    return { kind: provider.kind, error };
  };

  it('builds the provider the settings ask for when they can work', () => {
    expect(tunnelProviderFor({ provider: 'url', publicUrl: 'https://t.example.com' })).toBeInstanceOf(UrlTunnel);
  });

  it('stands in for an unusable setting with a provider whose opening names the field to fix', async () => {
    expect(await problem({ provider: 'ngrok', ngrokDomain: 'a.ngrok-free.app' }, { ngrokAuthtoken: ' ' })).toEqual({
      kind: 'ngrok',
      error: new ConfigError(
        'ngrok needs an authtoken: set it in Settings → How the service reaches Tally → ngrok authtoken, or with `tally login --ngrok` (the keychain, or without one a file only you can read), or set TALLY_NGROK_AUTHTOKEN.',
      ),
    });
    expect(await problem({ provider: 'url', publicUrl: 'http://tally.example.com' })).toEqual({
      kind: 'url',
      error: new ConfigError(
        'Settings → How the service reaches Tally → Public URL: The public URL must use https: webhooks cross the internet. Plain http is only accepted for addresses on this computer or your local network.',
      ),
    });
    expect(await problem({ provider: 'localtunnel', localtunnelHost: 'https://user:pw@lt.example.com' })).toEqual({
      kind: 'localtunnel',
      error: new ConfigError(
        'Settings → How the service reaches Tally → Server: The localtunnel server URL must not contain a user name, password, query or fragment.',
      ),
    });
    expect(await problem({ provider: 'ngrok', ngrokDomain: 'not a domain' }, { ngrokAuthtoken: 'tok' })).toMatchObject({
      error: { message: expect.stringMatching(/^Settings → How the service reaches Tally → Static domain: /) },
    });
  });
});
