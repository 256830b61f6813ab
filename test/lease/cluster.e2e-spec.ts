import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Cluster, Redis } from 'ioredis';
import { IdService, SnowflakeConfigError, SnowflakeModule } from '../../lib/index.js';
import { startClusterNodes } from '../support/redis-cluster.js';
import type { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep, waitUntil } from '../support/time.js';

/** A layout with a 3-bit worker field: eight IDs to hand out. */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
const TTL = 3000;

/**
 * Three real redis-server primaries joined into a Redis Cluster (slots split in three, CLUSTER MEET), and an ioredis
 * `Cluster` client given to the module: the lease scripts must find all of a namespace's keys on one slot.
 */
describe('Redis lease through an ioredis Cluster client (three real cluster nodes)', () => {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  const modules: TestingModule[] = [];
  let cluster: Cluster;

  beforeAll(async () => {
    const nodes = await startClusterNodes(3, 2000);
    servers.push(...nodes.servers);
    admins.push(...nodes.admins);
    await waitForClusterOk();
    cluster = new Cluster([{ host: '127.0.0.1', port: servers[0].port }]);
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', () => resolve());
      cluster.once('error', reject);
    });
    // No test here is about a fresh namespace's settling.
    for (const namespace of ['orders', 'moving']) await settledNamespace(cluster, namespace);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
    cluster?.disconnect();
    for (const admin of admins) admin.disconnect();
    await Promise.all(servers.map((server) => server.dispose()));
  });

  /** Whether a CLUSTER NODES line lists `slot` among its ranges. */
  function ownsSlot(line: string, slot: number): boolean {
    return line
      .split(' ')
      .slice(8)
      .some((range) => {
        const [low, high = low] = range.split('-').map(Number);
        return slot >= low && slot <= high;
      });
  }

  async function waitForClusterOk(): Promise<void> {
    let states: unknown[] = [];
    await waitUntil(
      async () => {
        states = await Promise.all(admins.map((admin) => admin.call('CLUSTER', 'INFO')));
        return states.every((info) => String(info).includes('cluster_state:ok'));
      },
      30_000,
      'the cluster to be ok',
      () => states.join('\n'),
    );
  }

  async function boot(namespace: string, redis: Record<string, unknown> = {}): Promise<TestingModule> {
    const module = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          redis: { client: cluster, namespace, ttlMs: TTL, ...redis },
        }),
      ],
    }).compile();
    modules.push(module);
    await module.init();
    return module;
  }

  it('gives two instances distinct worker IDs, keeps the namespace on one slot, and never closes the client', async () => {
    const [first, second] = await Promise.all([boot('orders'), boot('orders')]);
    const a = first.get(IdService);
    const b = second.get(IdService);
    expect(new Set([a.workerId, b.workerId]).size).toBe(2);
    const issued = [...a.nextBatch(1000), ...b.nextBatch(1000)];
    expect(new Set(issued).size).toBe(2000);

    // Every key of the namespace sits on one node, in one slot (the hash tag), so each script is atomic there.
    const keysPerNode = await Promise.all(admins.map((admin) => admin.keys('snowflake:{orders:dc0}:*')));
    const holders = keysPerNode.filter((keys) => keys.length > 0);
    expect(holders).toHaveLength(1);
    const slots = await Promise.all(holders[0].map((key) => admins[0].call('CLUSTER', 'KEYSLOT', key)));
    expect(new Set(slots).size).toBe(1);

    const lastOfA = a.decode(a.next()).timestamp;
    const workerOfA = a.workerId;
    await first.close();
    modules.splice(modules.indexOf(first), 1);
    expect(cluster.status).toBe('ready');
    const record = await cluster.hgetall(`snowflake:{orders:dc0}:w:${workerOfA}`);
    expect(record.token).toBeUndefined();
    expect(Number(record.ceiling)).toBe(lastOfA);

    // A third instance gets a never-used ID (they come before released ones), distinct from the one still held.
    const third = (await boot('orders')).get(IdService);
    expect([a.workerId, b.workerId]).not.toContain(third.workerId);
    // (A claim refused and retried, say by the clock check on a slow first round trip, passes over a never-used ID.)
    expect(third.workerId).not.toBe(workerOfA);
    expect(third.workerId).toBeGreaterThanOrEqual(2);
  });

  it("moves the namespace's slot under load, key by key: no undeclared key, no record written early, no duplicate", async () => {
    const namespace = 'moving';
    const slot = Number(await admins[0].call('CLUSTER', 'KEYSLOT', `snowflake:{${namespace}:dc0}:meta`));
    const owners = await Promise.all(
      admins.map(async (admin) => (await admin.call('CLUSTER', 'COUNTKEYSINSLOT', slot)) as number),
    );
    const ids = await Promise.all(admins.map(async (admin) => String(await admin.call('CLUSTER', 'MYID'))));
    const slotsOf = async (i: number) => String(await admins[i].call('CLUSTER', 'NODES'));
    const from = (await Promise.all(admins.map((_, i) => slotsOf(i))))
      .map((nodes, i) => ({ i, mine: nodes.split('\n').find((line) => line.includes('myself')) ?? '' }))
      .find(({ mine }) => ownsSlot(mine, slot))!.i;
    const to = (from + 1) % admins.length;
    expect(owners[to]).toBe(0);

    const holders = [await boot(namespace), await boot(namespace), await boot(namespace)].map((m) => m.get(IdService));
    const issued: bigint[] = [];
    const renewalErrors = new Set<string>();
    let running = true;
    const loop = (async () => {
      while (running) {
        for (const holder of holders) {
          try {
            issued.push(...holder.nextBatch(20));
          } catch {
            // fenced for a moment while a key moves: nothing issued
          }
          const lastError = holder.status().lease!.lastError;
          if (lastError !== null) renewalErrors.add(lastError);
        }
        await sleep(2);
      }
    })();
    const workersBefore = holders.map((holder) => holder.workerId);
    await sleep(300);

    // As `redis-cli --cluster reshard` does: importing, migrating, the keys in small batches, then the new owner.
    await admins[to].call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', ids[from]);
    await admins[from].call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', ids[to]);
    const migrateErrors: string[] = [];
    // Meta, cursor and expiry first, then the records one at a time with a pause (renewals run meanwhile): while the
    // namespace is split, a script that declares its keys is told to try again; one that reached a record through
    // an undeclared name would run on the importing node (asked there for its declared keys) and write the record
    // there before it moved, and the move of it would meet BUSYKEY.
    const all = (await admins[from].call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
    const records = all.filter((key) => key.includes(':w:'));
    const batches = [all.filter((key) => !key.includes(':w:')), ...records.map((key) => [key])];
    for (const batch of [...batches, [] as string[]]) {
      const keys =
        batch.length > 0 ? batch : ((await admins[from].call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[]);
      if (keys.length === 0) continue;
      try {
        await admins[from].call('MIGRATE', '127.0.0.1', servers[to].port, '', 0, 5000, 'KEYS', ...keys);
      } catch (error) {
        migrateErrors.push(String(error));
      }
      await sleep(batch.length > 0 ? 300 : 0);
    }
    for (const admin of admins) await admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', ids[to]);
    await sleep(1500);
    running = false;
    await loop;

    // No key was written on the importing node ahead of its move (MIGRATE would have met it: BUSYKEY).
    expect(migrateErrors).toEqual([]);
    expect(Number(await admins[from].call('CLUSTER', 'COUNTKEYSINSLOT', slot))).toBe(0);
    expect(new Set(issued).size).toBe(issued.length);
    expect(issued.length).toBeGreaterThan(0);
    expect([...renewalErrors].filter((error) => /non local key|BUSYKEY/.test(error))).toEqual([]);
    for (const holder of holders) expect(holder.status().lease!.state).toBe('held');
    // A move shorter than the fence costs no holder its ID.
    expect(holders.map((holder) => holder.workerId)).toEqual(workersBefore);
  }, 60_000);

  /**
   * Boots an instance of a namespace that has settled already (the warning comes before the claim either way) and
   * returns what the module warned meanwhile about the node timeout.
   */
  async function nodeTimeoutWarnings(namespace: string, redis: Record<string, unknown> = {}): Promise<string[]> {
    // The Cluster routes the helper's one-key script to the namespace's slot.
    await settledNamespace(cluster, namespace);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await boot(namespace, redis);
      return warn.mock.calls.map(([message]) => String(message)).filter((m) => m.includes('cluster-node-timeout'));
    } finally {
      warn.mockRestore();
    }
  }

  it('warns at bootstrap when cluster-node-timeout is too long for the TTL, and not once it fits', async () => {
    // 2000 ms (as started): promotions may take 5000 ms, beyond a TTL of 3000's window of 1650 ms.
    const advice = await nodeTimeoutWarnings('timing-long');
    expect(advice).toHaveLength(1);
    expect(advice[0]).toContain('cluster-node-timeout is 2000 ms');
    expect(advice[0]).toContain('1650 ms');
    expect(advice[0]).toContain('raise redis.ttlMs');

    // The longest node timeout of the primaries counts: 1000 ms everywhere fits a TTL of 10 s (window 5500 ms).
    try {
      for (const admin of admins) await admin.call('CONFIG', 'SET', 'cluster-node-timeout', '1000');
      expect(await nodeTimeoutWarnings('timing-fits', { ttlMs: 10_000 })).toEqual([]);

      await admins[2].call('CONFIG', 'SET', 'cluster-node-timeout', '3000');
      const oneSlow = await nodeTimeoutWarnings('timing-one-slow', { ttlMs: 10_000 });
      expect(oneSlow).toHaveLength(1);
      expect(oneSlow[0]).toContain('cluster-node-timeout is 3000 ms');
      expect(oneSlow[0]).toContain('set cluster-node-timeout to 2200 ms or less');
    } finally {
      for (const admin of admins) await admin.call('CONFIG', 'SET', 'cluster-node-timeout', '2000');
    }
  }, 90_000);

  it('refuses waitForReplicas with a Cluster client at bootstrap, naming the option', async () => {
    const error = await boot('replicas', { waitForReplicas: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as SnowflakeConfigError).option).toBe('redis.waitForReplicas');
    expect(cluster.status).toBe('ready');
  });

  it("confirms each claim with every node's CLUSTER NODES, unless redis.confirmWithCluster is false", async () => {
    /** How many CLUSTER NODES each node has answered so far (INFO commandstats). */
    const asked = async () =>
      Promise.all(
        admins.map(async (admin) =>
          Number(/cmdstat_cluster\|nodes:calls=(\d+)/.exec(await admin.info('commandstats'))?.[1] ?? 0),
        ),
      );
    const before = await asked();
    await settledNamespace(cluster, 'confirmed');
    await boot('confirmed');
    const confirmed = await asked();
    // Every node was asked (ioredis itself reads the slots with CLUSTER SLOTS).
    expect(confirmed.every((calls, i) => calls > before[i])).toBe(true);

    await settledNamespace(cluster, 'unconfirmed');
    await boot('unconfirmed', { confirmWithCluster: false });
    const after = await asked();
    expect(after).toEqual(confirmed);
  });
});
