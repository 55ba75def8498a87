import type { NatsConnection } from '@nats-io/transport-node';
import { getSha256Backend } from '@nats-io/obj';
import { describe, expect, it } from 'vitest';
import { NatsTeamStore } from './store.js';

describe('NatsTeamStore', () => {
  // The Object Store's default SHA-256 is pure JavaScript: 42 % of a team receiver's CPU in a burst (issue 22).
  it("has the Object Store hash with Node's SHA-256", () => {
    new NatsTeamStore({} as NatsConnection, { retentionMs: 60_000 });
    expect(getSha256Backend()).toBe('native');
  });
});
