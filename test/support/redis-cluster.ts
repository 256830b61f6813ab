import { Redis } from 'ioredis';
import { RedisServer } from './redis-server.js';

const SLOTS = 16384;

/** Real redis-server processes in cluster mode, joined into one cluster, and an admin connection to each. */
export interface ClusterNodes {
  servers: RedisServer[];
  admins: Redis[];
  /** The first slot each of the three primaries does not serve: 0 to `thirds[0] - 1` is the first's, and so on. */
  thirds: [number, number];
}

/**
 * Starts `count` redis-server processes in cluster mode on free ports, gives the slots to the first three in thirds
 * (`CLUSTER ADDSLOTSRANGE`) and joins every one to the first (`CLUSTER MEET`); the rest start with no slots, to be
 * made replicas. The caller waits for the cluster to be ok and disposes of the servers.
 */
export async function startClusterNodes(count: number, nodeTimeoutMs: number): Promise<ClusterNodes> {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  for (let i = 0; i < count; i++) {
    const args = ['--cluster-enabled', 'yes', '--cluster-node-timeout', String(nodeTimeoutMs)];
    servers.push(await RedisServer.start({ args }));
    admins.push(new Redis(servers[i].url));
  }
  const third = Math.floor(SLOTS / 3);
  await admins[0].call('CLUSTER', 'ADDSLOTSRANGE', 0, third - 1);
  await admins[1].call('CLUSTER', 'ADDSLOTSRANGE', third, 2 * third - 1);
  await admins[2].call('CLUSTER', 'ADDSLOTSRANGE', 2 * third, SLOTS - 1);
  for (const server of servers.slice(1)) await admins[0].call('CLUSTER', 'MEET', '127.0.0.1', server.port);
  return { servers, admins, thirds: [third, 2 * third] };
}
