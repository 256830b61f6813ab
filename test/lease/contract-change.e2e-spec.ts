import { Redis } from 'ioredis';
import { SnowflakeCodec, resolveLayout } from '../../lib/index.js';
import { IdWorkerPool, analyse, sleep, type IdWorkerConfig } from '../support/id-workers.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';

/**
 * A fleet that stops gracefully, and a redeploy with narrower clock numbers on the same layout, across real processes
 * and a real redis-server. Each release sets the lease's expiry to the moment it stopped, while the holder's last
 * timestamps ran up to its clock bound and clock-back tolerance ahead of the server. The new contract is taken at
 * once (no lease is live, and the layout is the same); when the free IDs' records are then evicted, the time rule
 * must wait out the old contract's fence margin, not only the new one's, or the new instance issues the old IDs again.
 */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 1, sequenceBits: 12 } as const;
const codec = new SnowflakeCodec(resolveLayout(LAYOUT));

describe('a redeploy with narrower clock numbers, after a graceful stop and evicted records (real processes)', () => {
  let server: RedisServer;
  let admin: Redis;
  let pool: IdWorkerPool;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  afterEach(async () => {
    await pool.dispose();
  });
  afterAll(async () => {
    admin.disconnect();
    await server.dispose();
  });

  it('repeats no ID: the new instance starts above the old holders’ last timestamps', async () => {
    const namespace = `narrower-${process.pid}`;
    const keys = `snowflake:{${namespace}:dc0}:`;
    await settledNamespace(server.url, namespace);
    pool = new IdWorkerPool();
    const config = (extra: Partial<IdWorkerConfig>): Omit<IdWorkerConfig, 'out'> => ({
      url: server.url,
      namespace,
      ttlMs: 10_000,
      layout: LAYOUT,
      batch: 8,
      intervalMs: 2,
      ...extra,
    });
    // The old fleet: fenceMarginMs 3000 (clock-back tolerance 1000, clock bound 996), clocks 900 ms ahead of the
    // server's (within the bound). It holds both worker IDs of the layout.
    const old = [1, 2].map((i) =>
      pool.spawn(config({ redis: { fenceMarginMs: 3000 }, clockOffsetMs: 900 }), `old-${i}`),
    );
    const oldWorkers = await Promise.all(old.map((worker) => worker.ready(30_000)));
    // The new instance: fenceMarginMs 200 (tolerance 100, bound 46), its clock 40 ms behind the server's; booted up
    // to its claim, which waits for the gate.
    const next = pool.spawn(config({ redis: { fenceMarginMs: 200 }, clockOffsetMs: -40, gate: true }), 'new');
    await next.waitFor((e) => e.event === 'loaded', 30_000, 'loaded');
    await sleep(1000);
    await Promise.all(old.map((worker) => worker.stop()));
    // allkeys-lru evicts the records of free IDs first: nothing reads them.
    expect(await admin.del(`${keys}w:0`, `${keys}w:1`)).toBe(2);
    next.go();
    const workerId = await next.ready(30_000);
    await sleep(1500);
    await next.stop();

    expect(oldWorkers).toContain(workerId);
    expect(await admin.hget(`${keys}meta`, 'config')).toContain('fenceMarginMs=200');
    expect(next.ids().length).toBeGreaterThan(100);
    const analysis = analyse([...old, next], codec);
    expect(analysis.duplicates).toEqual([]);
    expect(analysis.overlaps).toEqual([]);
  }, 120_000);
});
