import { describe, expect, it } from 'vitest';
import { NO_ORIGIN_MESSAGE, checkOrigin, corsHeaders, normalizeOrigin, preflightHeaders } from './cors.js';

describe('normalizeOrigin', () => {
  it.each([
    ['https://App.Example', 'https://app.example'],
    ['https://app.example:443', 'https://app.example'],
    ['http://127.0.0.1:5173/', 'http://127.0.0.1:5173'],
    ['https://app.example/path?q', 'https://app.example'],
    ['http://[::1]:80', 'http://[::1]'],
    ['null', null],
    ['', null],
    ['file:///tmp/x.html', null],
    ['chrome-extension://abc', null],
    ['not a url', null],
  ])('%j → %j', (input, expected) => {
    expect(normalizeOrigin(input)).toBe(expected);
  });
});

describe('checkOrigin', () => {
  const allowed = ['https://app.example', 'http://localhost:3000'];

  it('lets requests without Origin through: they are not cross-origin browser requests', () => {
    expect(checkOrigin(undefined, allowed)).toEqual({ kind: 'none' });
    expect(checkOrigin(undefined, [])).toEqual({ kind: 'none' });
  });

  it('allows an exact scheme, host and port match and echoes the header as sent', () => {
    expect(checkOrigin('https://app.example', allowed)).toEqual({ kind: 'allowed', origin: 'https://app.example' });
    expect(checkOrigin('https://APP.example:443', allowed)).toEqual({
      kind: 'allowed',
      origin: 'https://APP.example:443',
    });
    expect(checkOrigin('http://localhost:3000', allowed).kind).toBe('allowed');
  });

  it.each([
    'http://app.example',
    'https://app.example:8443',
    'https://sub.app.example',
    'https://app.example.evil',
    'null',
    '*',
  ])('refuses %s', (origin) => {
    const verdict = checkOrigin(origin, allowed);
    expect(verdict.kind).toBe('refused');
    if (verdict.kind === 'refused') expect(verdict.message).toMatch(/not allowed/);
  });

  it('explains how to add an origin while none is configured', () => {
    expect(checkOrigin('https://app.example', [])).toMatchObject({ kind: 'refused', message: NO_ORIGIN_MESSAGE });
    expect(NO_ORIGIN_MESSAGE).toContain('tally listen --upload-origin');
  });
});

describe('headers', () => {
  it('never allows credentials or a wildcard', () => {
    const all = { ...corsHeaders('https://app.example'), ...preflightHeaders('https://app.example', true) };
    expect(all['Access-Control-Allow-Origin']).toBe('https://app.example');
    expect(all.Vary).toBe('Origin');
    expect(Object.keys(all)).not.toContain('Access-Control-Allow-Credentials');
    expect(Object.values(all)).not.toContain('*');
    expect(preflightHeaders('https://app.example')).not.toHaveProperty('Access-Control-Allow-Private-Network');
  });
});
