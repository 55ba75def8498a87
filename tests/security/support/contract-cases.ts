/**
 * Invalid argument tuples for every request of the contract, built by hand per argument kind (never by
 * asking the schema what it refuses, which would only prove the schema agrees with itself). A seeded
 * generator adds random mutations of the valid tuples on top of the fixed cases, so a failure reproduces
 * from the printed seed.
 */
import { REQUEST_NAMES, type RequestHandlers, type RequestName } from '../../../electron/contract.js';
import { Rng } from '../../../electron/core/sandbox/rng.js';

/** Marker put into oversized strings: a validation message must never echo it back. */
export const ECHO_CANARY = 'ECHO-CANARY-7f3a';

/** Arguments every request accepts (the control that proves the handlers are reachable at all). */
export const VALID_ARGS: Record<RequestName, unknown[]> = {
  'app:info': [],
  'app:diagnostics': [],
  'app:rendererError': [{ kind: 'error', message: 'x is not defined', stack: null, source: null }],
  'channels:live': [],
  'channels:search': [{ since: '2024-01-01T00:00:00Z', until: '2024-01-02T00:00:00Z', keyword: 'a' }],
  'channels:end': ['1581324488053_Dc5aQ'],
  'recordings:list': [],
  'recordings:retry': ['k1'],
  'recordings:reveal': ['k1'],
  'recordings:open': ['k1'],
  'recordings:path': ['k1'],
  'recordings:thumbnail': ['k1'],
  'settings:checkFolder': ['/tmp/recordings'],
  'credentials:setNgrokToken': ['2abc_ngrok-token'],
  'credentials:clearNgrokToken': [],
  'recordings:remove': ['k1'],
  'recordings:gaps': [],
  'settings:get': [],
  'settings:update': [{ pollIntervalSec: 5 }],
  'settings:chooseFolder': [],
  'credentials:status': [],
  'credentials:set': [{ serviceId: 'svc', secret: 's3cr3t-value' }],
  'credentials:clear': [],
  'credentials:test': [{ serviceId: 'svc', secret: 's3cr3t-value' }],
  'tunnel:status': [],
  'webhook:register': [],
  'clipboard:write': ['text'],
  'studio:get': [],
  'studio:set': [{ mode: 'off', url: null, name: null }],
  'studio:setCredentials': ['nats://127.0.0.1:4222', { token: 'team-token' }],
  'studio:clearCredentials': [],
  'studio:test': ['nats://127.0.0.1:1'],
  'health:get': [],
};

export interface InvalidCase {
  name: RequestName;
  label: string;
  args: unknown;
}

/** Nested arrays `depth` deep: cheap to build, expensive for a careless recursive validator. */
function deepArray(depth: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function deepObject(depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const huge = (n: number): string => `${'x'.repeat(n)}${ECHO_CANARY}`;

/** Values of every JSON and JS kind that are never a valid string, object or number argument. */
function junkValues(): { label: string; value: unknown }[] {
  return [
    { label: 'undefined', value: undefined },
    { label: 'null', value: null },
    { label: 'true', value: true },
    { label: 'number', value: 42 },
    { label: 'NaN', value: Number.NaN },
    { label: 'Infinity', value: Number.POSITIVE_INFINITY },
    { label: '-Infinity', value: Number.NEGATIVE_INFINITY },
    { label: 'array', value: ['k1'] },
    { label: 'deep array', value: deepArray(2000) },
    { label: 'bigint', value: 10n },
    { label: 'function', value: () => 'k1' },
    { label: 'symbol', value: Symbol('k1') },
    { label: 'String object', value: Object('k1') as object },
    { label: 'object with toString', value: { toString: () => 'k1' } },
  ];
}

/** Objects that are never a valid plain record argument (plus the junk above). */
function notARecord(): { label: string; value: unknown }[] {
  return [
    ...junkValues().filter((j) => j.label !== 'undefined'),
    { label: 'string', value: 'k1' },
    { label: 'Date', value: new Date() },
    { label: 'Map', value: new Map([['pollIntervalSec', 5]]) },
    { label: 'class instance', value: new (class Patch {})() },
    { label: 'Uint8Array', value: new Uint8Array(4) },
  ];
}

/** Keys that try to pollute prototypes, as JSON.parse creates them (own, enumerable). */
function pollutingRecords(base: Record<string, unknown>): { label: string; value: unknown }[] {
  const json = JSON.stringify(base);
  const inject = (extra: string) => JSON.parse(json === '{}' ? `{${extra}}` : `${json.slice(0, -1)},${extra}}`);
  return [
    { label: '__proto__ key', value: inject('"__proto__":{"polluted":"yes"}') },
    { label: 'constructor key', value: inject('"constructor":{"prototype":{"polluted":"yes"}}') },
    { label: 'prototype key', value: inject('"prototype":{"polluted":"yes"}') },
    { label: 'extra key', value: { ...base, extra: 1 } },
    { label: 'secret-looking key', value: { ...base, apiSecret: 'x' } },
  ];
}

function stringArgCases(name: RequestName, max: number, min: number): { label: string; args: unknown[] }[] {
  const cases = [
    ...junkValues().map((j) => ({ label: `arg ${j.label}`, args: [j.value] })),
    { label: 'oversized', args: [huge(max + 1)] },
    { label: 'much too long', args: [huge(1_000_000)] },
  ];
  if (min > 0) cases.push({ label: 'empty', args: [''] });
  void name;
  return cases;
}

const SEARCH_OK = { since: '2024-01-01T00:00:00Z', until: '2024-01-02T00:00:00Z' };

function searchCases(): { label: string; args: unknown[] }[] {
  const bad: [string, Record<string, unknown>][] = [
    ['no until', { since: SEARCH_OK.since }],
    ['no since', { until: SEARCH_OK.until }],
    ['since after until', { since: SEARCH_OK.until, until: SEARCH_OK.since }],
    ['not ISO', { since: 'yesterday', until: SEARCH_OK.until }],
    ['month 13', { since: '2024-13-01T00:00:00Z', until: SEARCH_OK.until }],
    ['no offset', { since: '2024-01-01T00:00:00', until: SEARCH_OK.until }],
    ['epoch number', { since: 1_700_000_000, until: SEARCH_OK.until }],
    ['Date object', { since: new Date(), until: SEARCH_OK.until }],
    ['keyword too long', { ...SEARCH_OK, keyword: huge(1025) }],
    ['keyword number', { ...SEARCH_OK, keyword: 5 }],
    ['keyword null', { ...SEARCH_OK, keyword: null }],
    ['keyword nested', { ...SEARCH_OK, keyword: deepObject(500) }],
  ];
  return [
    ...notARecord().map((j) => ({ label: `query ${j.label}`, args: [j.value] })),
    ...bad.map(([label, value]) => ({ label, args: [value] })),
    ...pollutingRecords(SEARCH_OK).map((p) => ({ label: p.label, args: [p.value] })),
  ];
}

/** Per settings field: values that are the wrong type or out of range. */
const SETTINGS_BAD: Record<string, unknown[]> = {
  recordingsFolder: ['', huge(4097), 5, null, ['a']],
  pollIntervalSec: [1, 0, -5, 3601, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '5', null],
  fileNameTemplate: ['', huge(257), 7, null],
  concurrency: [0, 11, 1.5, Number.NaN, '3', -1, 1e12],
  notifications: [true, null, { saved: 'yes' }, { saved: true, extra: true }, [true]],
  launchAtLogin: ['true', 1, null],
  language: ['fr', 'EN', '', 3, null],
  tunnel: [
    'ngrok',
    null,
    { provider: 'frp' },
    { provider: 'none', extra: 1 },
    { publicUrl: 'javascript:alert(1)' },
    { publicUrl: 'file:///etc/passwd' },
    { publicUrl: 'ftp://host/' },
    { publicUrl: 'not a url' },
    { publicUrl: huge(2049) },
    { ngrokDomain: huge(254) },
    { localtunnelHost: 'gopher://x' },
    { authtoken: 'x' },
  ],
  autoRegisterWebhook: ['yes', 0, null],
  endpoints: [
    'https://x',
    null,
    { baseUrl: 'file:///etc/passwd' },
    { baseUrl: 'javascript:1' },
    { secret: 'x' },
    { adminUrl: 5 },
  ],
  uploadOrigins: ['https://a', [5], Array.from({ length: 51 }, () => 'https://a'), [huge(2049)], null],
  demoMode: ['false', 0],
  receivingPaused: ['true', 1],
  receiverPort: [0, 65_536, 1.5, '8787', -1, null],
  // Fields the renderer must never be able to set at all.
  receiverHost: ['0.0.0.0'],
  downloadOrigins: [['http://169.254.169.254']],
  version: [2],
  secret: ['x'],
};

function settingsCases(): { label: string; args: unknown[] }[] {
  const cases: { label: string; args: unknown[] }[] = notARecord().map((j) => ({
    label: `patch ${j.label}`,
    args: [j.value],
  }));
  for (const [field, values] of Object.entries(SETTINGS_BAD)) {
    values.forEach((value, i) => cases.push({ label: `${field} #${i}`, args: [{ [field]: value }] }));
  }
  for (const p of pollutingRecords({ pollIntervalSec: 5 })) cases.push({ label: p.label, args: [p.value] });
  cases.push({
    label: 'nested __proto__ in tunnel',
    args: [JSON.parse('{"tunnel":{"__proto__":{"polluted":"yes"}}}')],
  });
  cases.push({ label: 'deep junk in notifications', args: [{ notifications: deepObject(3000) }] });
  return cases;
}

function credentialsCases(optional: boolean): { label: string; args: unknown[] }[] {
  const ok = { serviceId: 'svc', secret: 's3cr3t-value' };
  const bad: [string, unknown][] = [
    ['no secret', { serviceId: 'svc' }],
    ['no serviceId', { secret: 'x' }],
    ['blank serviceId', { serviceId: '   ', secret: 'x' }],
    ['empty secret', { serviceId: 'svc', secret: '' }],
    ['secret too long', { serviceId: 'svc', secret: huge(4097) }],
    ['serviceId too long', { serviceId: huge(257), secret: 'x' }],
    ['secret number', { serviceId: 'svc', secret: 12345 }],
    ['secret array', { serviceId: 'svc', secret: ['x'] }],
  ];
  const cases = [
    ...notARecord()
      .filter((j) => !(optional && j.label === 'undefined'))
      .map((j) => ({ label: `credentials ${j.label}`, args: [j.value] })),
    ...bad.map(([label, value]) => ({ label, args: [value] })),
    ...pollutingRecords(ok).map((p) => ({ label: p.label, args: [p.value] })),
  ];
  if (!optional) cases.push({ label: 'missing', args: [] });
  return cases;
}

const RENDERER_ERROR_OK = { kind: 'error', message: 'x is not defined', stack: null, source: null };

/** A page's error report: only a bounded, plain record of the four fields. */
function rendererErrorCases(): { label: string; args: unknown[] }[] {
  const bad: [string, Record<string, unknown>][] = [
    ['unknown kind', { ...RENDERER_ERROR_OK, kind: 'crash' }],
    ['message too long', { ...RENDERER_ERROR_OK, message: huge(2001) }],
    ['stack too long', { ...RENDERER_ERROR_OK, stack: huge(8001) }],
    ['source too long', { ...RENDERER_ERROR_OK, source: huge(501) }],
    ['message number', { ...RENDERER_ERROR_OK, message: 5 }],
    ['no message', { kind: 'error', stack: null, source: null }],
  ];
  return [
    ...notARecord().map((j) => ({ label: `report ${j.label}`, args: [j.value] })),
    ...pollutingRecords(RENDERER_ERROR_OK).map((p) => ({ label: `report ${p.label}`, args: [p.value] })),
    ...bad.map(([label, value]) => ({ label, args: [value] })),
  ];
}

/** The fixed cases of one request: arity, then the kind of its argument. */
function fixedCases(name: RequestName): { label: string; args: unknown }[] {
  const valid = VALID_ARGS[name];
  const cases: { label: string; args: unknown }[] = [
    { label: 'args undefined', args: undefined },
    { label: 'args null', args: null },
    { label: 'args object', args: { 0: valid[0], length: valid.length } },
    { label: 'args string', args: 'k1' },
    { label: 'one extra', args: [...valid, 'extra'] },
    { label: 'extra undefined', args: [...valid, undefined, undefined] },
    { label: 'many extra', args: [...valid, ...Array.from({ length: 1000 }, (_, i) => i)] },
  ];
  switch (name) {
    case 'channels:search':
      return [...cases, { label: 'missing', args: [] }, ...searchCases()];
    case 'channels:end':
      return [...cases, { label: 'missing', args: [] }, ...stringArgCases(name, 4096, 1)];
    case 'recordings:retry':
    case 'recordings:reveal':
    case 'recordings:open':
    case 'recordings:path':
    case 'recordings:thumbnail':
    case 'recordings:remove':
      return [...cases, { label: 'missing', args: [] }, ...stringArgCases(name, 256, 1)];
    case 'clipboard:write':
      return [...cases, { label: 'missing', args: [] }, ...stringArgCases(name, 65_536, 0)];
    case 'settings:checkFolder':
      return [...cases, { label: 'missing', args: [] }, ...stringArgCases(name, 4096, 1)];
    case 'credentials:setNgrokToken':
      return [...cases, { label: 'missing', args: [] }, ...stringArgCases(name, 512, 1)];
    case 'settings:update':
      return [...cases, { label: 'missing', args: [] }, ...settingsCases()];
    case 'credentials:set':
      return [...cases, ...credentialsCases(false)];
    case 'credentials:test':
      return [...cases, ...credentialsCases(true)];
    case 'app:rendererError':
      return [...cases, { label: 'missing', args: [] }, ...rendererErrorCases()];
    default:
      // No arguments at all: anything is one too many.
      return [...cases, ...junkValues().map((j) => ({ label: `arg ${j.label}`, args: [j.value] }))];
  }
}

/**
 * Random mutations that are invalid by construction: the valid tuple with one element replaced by junk of
 * another type, or with junk appended.
 */
function randomCases(name: RequestName, rng: Rng, rounds: number): { label: string; args: unknown }[] {
  const valid = VALID_ARGS[name];
  const junk = junkValues().filter((j) => j.label !== 'undefined' || valid.length === 0);
  const out: { label: string; args: unknown }[] = [];
  for (let i = 0; i < rounds; i++) {
    const pick = junk[rng.int(0, junk.length - 1)] as { label: string; value: unknown };
    if (valid.length > 0 && rng.next() < 0.5 && !(name === 'credentials:test' && pick.label === 'undefined')) {
      const args = [...valid];
      args[rng.int(0, valid.length - 1)] = pick.value;
      out.push({ label: `random replace with ${pick.label}`, args });
    } else {
      const extra = Array.from(
        { length: rng.int(1, 4) },
        () => (junk[rng.int(0, junk.length - 1)] as { value: unknown }).value,
      );
      out.push({ label: `random append ${extra.length}`, args: [...valid, ...extra] });
    }
  }
  return out;
}

/** Every invalid case of every request. */
export function invalidCases(seed: number, randomRounds = 25): InvalidCase[] {
  const rng = new Rng(seed);
  const all: InvalidCase[] = [];
  for (const name of REQUEST_NAMES) {
    for (const c of [...fixedCases(name), ...randomCases(name, rng, randomRounds)]) all.push({ name, ...c });
  }
  return all;
}

/** A handler map in which every function records that it ran. */
export function recordingHandlers(): { handlers: RequestHandlers; calls: { name: RequestName; args: unknown[] }[] } {
  const calls: { name: RequestName; args: unknown[] }[] = [];
  const handlers = Object.fromEntries(
    REQUEST_NAMES.map((name) => [
      name,
      async (...args: unknown[]) => {
        calls.push({ name, args });
        return { from: name };
      },
    ]),
  ) as unknown as RequestHandlers;
  return { handlers, calls };
}
