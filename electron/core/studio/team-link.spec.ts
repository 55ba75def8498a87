/**
 * What a team link says when the team server answers but cannot do its part (here: JetStream runs, the studio's
 * stream is not there), in the words of the side it belongs to and naming the server: a receiver cannot store or
 * announce its recordings; a member cannot be sent announcements or recordings, so nothing new is mirrored (a
 * trial as a new user saw a member say the receiver's "cannot store or announce"). A real nats-server.
 */
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsServer } from '../../../tests/support/nats-server.js';
import { TeamLink, type TeamAnswer } from './team-link.js';

let server: NatsServer;
beforeAll(async () => {
  server = await startNatsServer();
}, 30_000);
afterAll(() => server.close());

async function said(role: 'receiver' | 'member'): Promise<TeamAnswer> {
  const nc = await connect({ servers: server.url });
  try {
    const link = new TeamLink(nc, { scheme: 'nats:', role, everyMs: 60_000 });
    await link.probe();
    link.stop();
    return link.answer!;
  } finally {
    await nc.close();
  }
}

describe('a team server that cannot do its part', () => {
  it('is said in the receiver terms on a receiver, naming the server', async () => {
    const answer = await said('receiver');
    expect(answer.answering).toBe(false);
    expect(answer.message).toContain(`The team server nats://127.0.0.1:${server.port} cannot store or announce`);
  });

  it('is said in the member terms on a member: no announcements, nothing mirrored, naming the server', async () => {
    const answer = await said('member');
    expect(answer.answering).toBe(false);
    expect(answer.message).toContain(`The team server nats://127.0.0.1:${server.port} cannot send this member`);
    expect(answer.message).toMatch(/nothing new is mirrored/);
    expect(answer.message).not.toMatch(/store/);
    expect(answer.note?.code).toBe('teamCannotMirror');
  });
});
