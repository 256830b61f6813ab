import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { Cluster } from 'ioredis';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { IdService, SnowflakeModule } from '../../lib/index.js';
import { LEASE_SCRIPTS } from '../../lib/lease/redis/script-cache.js';
import { ClusterTopology, type ClusterNode } from '../chaos/cluster-topology.mjs';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep, waitUntil } from '../support/time.js';

const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
const TTL = 3000;
const NAMESPACE = 'paused';
const META = `snowflake:{${NAMESPACE}:dc0}:meta`;

/**
 * A real Redis Cluster of three primaries and three replicas (cluster-node-timeout 1 s), the chaos run's
 * (test/chaos/cluster-topology.mjs): each node reaches the others' cluster bus through a proxy, so one node can be cut
 * from the bus while its clients still reach it. The namespace's primary is paused (SIGSTOP) past its replica's
 * promotion; an instance that boots meanwhile claims on the promoted node; a claim that waited in the paused primary's
 * socket runs, when the primary runs again cut from the bus, on its old data, where the same worker ID is still free:
 * the old primary cannot learn of its demotion before it answers, so the test reaches the hole on every run.
 */
describe('Redis lease on a Cluster whose primary is paused past its replica’s promotion (six real nodes)', () => {
  let dir: string;
  let topology: ClusterTopology;
  const clients: Cluster[] = [];
  const modules: TestingModule[] = [];
  let owner: ClusterNode;
  let slot: number;
  let paused = false;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cluster-pause-'));
    topology = new ClusterTopology(dir, { nodeTimeoutMs: 1000, log: () => undefined });
    await topology.start();
    slot = await topology.slotOf(META);
    owner = (await topology.ownerOf(slot))!;
    const setup = cluster();
    await ready(setup);
    await settledNamespace(setup, NAMESPACE);
    const replica = (await topology.replicaOf(owner))!;
    await waitUntil(
      () =>
        topology.admin(replica, async (c) => {
          await c.call('READONLY');
          return (await c.hget(META, 'marker')) !== null;
        }),
      10_000,
      'the meta to reach the replica',
    );
  }, 120_000);

  afterAll(async () => {
    if (paused) process.kill(owner.server.pid!, 'SIGCONT');
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
    for (const client of clients) client.disconnect();
    await topology?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /**
   * An app's Cluster client; `avoid`'s port is left out of its startup nodes (a node it cannot reach now). A client
   * with `staleMap` does not refresh its map of the slots on a timer (ioredis does every 5 s by default): its map is
   * as stale as any client's is in the seconds after a promotion, for as long as the test needs.
   */
  function cluster(avoid?: ClusterNode, staleMap = false): Cluster {
    const { startupNodes, natMap } = topology.connection().cluster;
    const nodes = startupNodes.filter((node) => node.port !== avoid?.server.port);
    const client = new Cluster(nodes, { natMap, ...(staleMap ? { slotsRefreshInterval: 0 } : {}) });
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

  const runIdOf = async (node: ClusterNode): Promise<string> =>
    /run_id:(\w+)/.exec(await topology.admin(node, (c) => c.info('server')))![1];

  it('an instance on each side of the promotion: distinct worker IDs, the old primary’s answer refused', async () => {
    // A client connected to the primary before it paused: its requests go on waiting in that socket (no socket error,
    // no MOVED), as an app's long-lived client's do.
    const early = cluster(undefined, true);
    await ready(early);
    // The primary has run the lease's scripts before (a fleet's claims and renewals leave them in its script cache),
    // so that the paused one answers the claim itself rather than NOSCRIPT.
    await topology.admin(owner, async (c) => {
      for (const { lua } of Object.values(LEASE_SCRIPTS)) await c.script('LOAD', lua);
    });
    const ownerRunId = await runIdOf(owner);
    process.kill(owner.server.pid!, 'SIGSTOP');
    paused = true;
    // Cut from the cluster bus from now on: what the other nodes send it while it is paused would wait in its sockets
    // and reach it first thing when it runs again; held at the bus proxies, nothing tells it it was demoted.
    topology.cutFromBus(owner);
    await topology.promotedAfter(owner, slot);
    // Every other node's map of the slots leaves the paused primary out before a new client reads one.
    await topology.leftOutOfSlots(owner);

    // A new instance reaches the promoted node; its data came from elsewhere, so the namespace settles first.
    const late = cluster(owner);
    await ready(late);
    const lateIds = (await boot(late)).get(IdService);

    // Another instance boots on the early client: its claim waits in the paused primary's socket. (The bootstrap's
    // cluster-node-timeout check, which cannot read the paused primary, comes first.)
    const logs: string[] = [];
    for (const level of ['log', 'warn'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((text: unknown) => {
        logs.push(String(text));
      });
    }
    const bootingEarly = boot(early);
    bootingEarly.catch(() => undefined);
    await waitUntil(async () => logs.some((line) => line.startsWith('cluster-node-timeout is')), 10_000, 'the check');
    await sleep(100);
    // The old primary runs again, still cut from the cluster bus: it answers from its old data, where worker ID
    // lateIds.workerId is free, and cannot learn meanwhile that it was demoted. Only its own word names it (1 of 3).
    process.kill(owner.server.pid!, 'SIGCONT');
    paused = false;
    // The claim the old primary ran on its old data, refused: its answer is named by its own view alone.
    const refused = new RegExp(
      `^Claiming a worker ID failed \\(the claim is not confirmed: 1 of 3 primaries name the Redis process that ` +
        `answered \\(${ownerRunId}, node ${owner.id}\\) .* named instead\\)`,
    );
    try {
      await waitUntil(
        async () => logs.some((line) => refused.test(line)),
        10_000,
        'the old primary’s answer',
        () => logs.join('\n'),
      );
    } finally {
      topology.restoreBus();
    }

    const earlyIds = (await bootingEarly).get(IdService);
    expect(earlyIds.workerId).not.toBe(lateIds.workerId);
    const issued = [...earlyIds.nextBatch(2000), ...lateIds.nextBatch(2000)];
    expect(new Set(issued).size).toBe(4000);
  }, 120_000);
});
