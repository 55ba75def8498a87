/**
 * The tests' nats-server helper: its ports and its readiness. A cluster test once waited 360 s on a cluster
 * that never had all its servers: one node's route port was another node's client port, and that node said
 * "Server is ready" before it died on it.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts, startNatsServer } from './nats-server.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

describe('the nats-server helper', () => {
  it('hands out different ports at once, below the range that port 0 binds come from', async () => {
    const ports = await freePorts(6);
    expect(new Set(ports).size).toBe(6);
    for (const port of ports) expect(port).toBeLessThan(32_768);
  });

  it('never calls a node of a cluster ready when its route port is taken', async () => {
    const [taken, peer] = await freePorts(2);
    const squatter = createServer().listen(taken, '127.0.0.1');
    await once(squatter, 'listening');
    cleanups.push(() => new Promise((resolve) => squatter.close(resolve)));
    const starting = startNatsServer({
      args: [
        ...['--server_name', 'lone', '--cluster_name', 'studio', '--cluster', `nats://127.0.0.1:${taken}`],
        ...['--routes', `nats://127.0.0.1:${peer}`],
      ],
    });
    starting.then((server) => cleanups.push(() => server.close())).catch(() => undefined);
    await expect(starting).rejects.toThrow(/Error listening on router port/);
  });
});
