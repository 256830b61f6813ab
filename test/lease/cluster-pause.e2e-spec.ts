import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { IdService, SnowflakeModule } from '../../lib/index.js';
import { ClusterConfirm } from '../../lib/lease/redis/cluster.confirm.js';
import { LEASE_SCRIPTS } from '../../lib/lease/redis/script-cache.js';
import { startClusterNodes } from '../support/redis-cluster.js';
import type { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep, waitUntil } from '../support/time.js';

const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
const TTL = 3000;
const NAMESPACE = 'paused';
const META = `snowflake:{${NAMESPACE}:dc0}:meta`;

/**
 * Three real redis-server primaries and a replica of the one that serves the namespace, joined into a Redis Cluster
 * with a node timeout of 1 s. The namespace's primary is paused (SIGSTOP) past its replica's promotion; an instance
 * that boots meanwhile claims on the promoted node; a claim that waited in the paused primary's socket is run, when it
 * runs again, on its old data, where the same worker ID is still free.
 */
describe('Redis lease on a Cluster whose primary is paused past its replica’s promotion (four real nodes)', () => {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  const clients: Cluster[] = [];
  const modules: TestingModule[] = [];
  let owner: number;
  let replica: number;
  let paused = false;

  beforeAll(async () => {
    const nodes = await startClusterNodes(4, 1000);
    servers.push(...nodes.servers);
    admins.push(...nodes.admins);
    const slot = Number(await admins[0].call('CLUSTER', 'KEYSLOT', META));
    owner = slot < nodes.thirds[0] ? 0 : slot < nodes.thirds[1] ? 1 : 2;
    replica = 3;
    const ownerId = String(await admins[owner].call('CLUSTER', 'MYID'));
    await waitUntil(
      async () => String(await admins[replica].call('CLUSTER', 'NODES')).includes(ownerId),
      20_000,
      'the replica to know the primary',
    );
    await admins[replica].call('CLUSTER', 'REPLICATE', ownerId);
    await waitUntil(
      async () => (await admins[replica].info('replication')).includes('master_link_status:up'),
      20_000,
      'the replica to sync',
    );
    await waitUntil(
      async () =>
        (await Promise.all(admins.map((a) => a.call('CLUSTER', 'INFO')))).every((i) =>
          String(i).includes('cluster_state:ok'),
        ),
      30_000,
      'the cluster to be ok',
    );
    const setup = cluster(owner);
    await ready(setup);
    await settledNamespace(setup, NAMESPACE);
    await admins[replica].call('READONLY');
    await waitUntil(
      async () => (await admins[replica].hget(META, 'marker')) !== null,
      10_000,
      'the meta to reach the replica',
    );
  }, 90_000);

  afterAll(async () => {
    if (paused) process.kill(servers[owner].pid!, 'SIGCONT');
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
    for (const client of clients) client.disconnect();
    for (const admin of admins) admin.disconnect();
    await Promise.all(servers.map((server) => server.dispose()));
  });

  function cluster(startAt: number): Cluster {
    const client = new Cluster([{ host: '127.0.0.1', port: servers[startAt].port }]);
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  }

  async function ready(client: Cluster): Promise<void> {
    if (client.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      client.once('ready', () => resolve());
      client.once('error', reject);
    });
  }

  async function boot(client: Cluster): Promise<TestingModule> {
    const module = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          redis: { client, namespace: NAMESPACE, ttlMs: TTL, bootstrapAttempts: 100 },
        }),
      ],
    }).compile();
    modules.push(module);
    await module.init();
    return module;
  }

  it('an instance on each side of the promotion: distinct worker IDs, and only the promoted node is confirmed', async () => {
    // A client connected to the primary before it paused: its requests go on waiting in that socket (no socket error,
    // no MOVED), as an app's long-lived client's do.
    const early = cluster(owner);
    await ready(early);
    // The primary has run the lease's scripts before (a fleet's claims and renewals leave them in its script cache),
    // so that the paused one answers the claim itself rather than NOSCRIPT.
    for (const { lua } of Object.values(LEASE_SCRIPTS)) await admins[owner].script('LOAD', lua);
    process.kill(servers[owner].pid!, 'SIGSTOP');
    paused = true;
    const replicaId = String(await admins[replica].call('CLUSTER', 'MYID'));
    const other = (owner + 1) % 3;
    await waitUntil(
      async () =>
        String(await admins[other].call('CLUSTER', 'NODES'))
          .split('\n')
          .some((line) => line.startsWith(replicaId) && line.includes('master')),
      30_000,
      'the replica to be promoted',
    );
    // A new instance reaches the promoted node; its data came from elsewhere, so the namespace settles first.
    const late = cluster(other);
    await ready(late);
    const lateIds = (await boot(late)).get(IdService);

    // Another instance boots on the early client: its claim waits in the paused primary's socket, which runs again
    // at once. (The bootstrap's cluster-node-timeout check, which cannot read the paused primary, comes first.)
    const logs: { at: number; text: string }[] = [];
    for (const level of ['log', 'warn'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((text: unknown) => {
        logs.push({ at: Date.now(), text: String(text) });
      });
    }
    const bootingEarly = boot(early);
    bootingEarly.catch(() => undefined);
    await waitUntil(
      async () => logs.some((line) => line.text.startsWith('cluster-node-timeout is')),
      10_000,
      'the check',
    );
    await sleep(100);
    process.kill(servers[owner].pid!, 'SIGCONT');
    paused = false;

    const earlyIds = (await bootingEarly).get(IdService);
    expect(earlyIds.workerId).not.toBe(lateIds.workerId);
    const issued = [...earlyIds.nextBatch(2000), ...lateIds.nextBatch(2000)];
    expect(new Set(issued).size).toBe(4000);
    // Whether the old primary ran that claim on its old data before it learnt of its demotion is up to the order in
    // which it reads its sockets (before the confirmation, both instances held worker ID 0 in one of four runs).

    // The confirmation itself, once the old primary has learnt it is a replica now.
    await waitUntil(
      async () => (await admins[owner].info('replication')).includes('role:slave'),
      10_000,
      'the old primary to be a replica',
    );
    const confirm = ClusterConfirm.forClient(early, 2000)!;
    const runIdOf = async (i: number) => /run_id:(\w+)/.exec(await admins[i].info('server'))![1];
    await expect(confirm.confirm(await runIdOf(replica), META)).resolves.toMatchObject({ kind: 'confirmed', of: 3 });
    const old = await confirm.confirm(await runIdOf(owner), META);
    expect(old).toMatchObject({ kind: 'unconfirmed' });
    expect(old.kind === 'unconfirmed' && old.detail).toMatch(/^0 of 3 primaries name .* named instead$/);
  }, 90_000);
});
