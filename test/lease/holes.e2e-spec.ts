import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  IdService,
  LeaseConfigMismatchError,
  SnowflakeModule,
  WorkerIdInUseError,
  type SnowflakeModuleOptions,
} from '../../lib/index.js';
import { issueInBackground } from '../support/issue-in-background.js';
import { RedisServer } from '../support/redis-server.js';
import { SteppableClock, sleep, waitUntil } from '../support/time.js';
import { settledNamespace } from '../support/settled-namespace.js';

/**
 * One deterministic test per way of issuing a duplicate that fault injection found: two generators on one worker ID
 * in a process, a clock that ran ahead followed by a Redis data loss, a process handed back a worker ID it held
 * before, keys deleted while the meta survived. (The Sentinel split brain is in replication.e2e-spec.ts.)
 */

/** Two IDs to hand out; every test runs in its own namespace. */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 1, sequenceBits: 12 } as const;
/** Room for a clock ahead of Redis's yet in sync: 100 + 2 × 600 + 1 ≤ 1500. */
const LEASE = { ttlMs: 3000, fenceMarginMs: 1500, maxClockOffsetMs: 600, retryBackoffMs: 50 };

describe('the five ways to a duplicate, each closed', () => {
  const modules: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
  });

  describe('1. two SnowflakeModule registrations in one process', () => {
    @Module({ imports: [SnowflakeModule.forRoot({ workerId: 7 })] })
    class FeatureModule {}

    it('refuses a second generator on the same static worker ID at bootstrap, saying to import the module once', async () => {
      // The worker ID is taken while the module is built: the second registration fails compile().
      const error = await Test.createTestingModule({
        imports: [SnowflakeModule.forRoot({ workerId: 7 }), FeatureModule],
      })
        .compile()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WorkerIdInUseError);
      expect((error as Error).message).toMatch(/Worker ID 7 \(datacenter 0\) is already used/);
      expect((error as Error).message).toContain('isGlobal: true');
    });

    it('frees the worker ID when the app closes, and allows distinct worker IDs side by side', async () => {
      const first = await Test.createTestingModule({ imports: [SnowflakeModule.forRoot({ workerId: 8 })] }).compile();
      await first.init();
      await first.close();
      const again = await Test.createTestingModule({
        imports: [SnowflakeModule.forRoot({ workerId: 8 }), SnowflakeModule.forRoot({ workerId: 9 })],
      }).compile();
      modules.push(again);
      await again.init();
      expect(again.get(IdService).next()).toBeGreaterThan(0n);
    });
  });

  describe('with a Redis lease', () => {
    let server: RedisServer;
    let admin: Redis;
    let namespace: string;
    let counter = 0;

    beforeAll(async () => {
      server = await RedisServer.start();
      admin = new Redis(server.url);
    });
    afterAll(async () => {
      admin.disconnect();
      await server.dispose();
    });
    beforeEach(async () => {
      namespace = `holes${++counter}`;
      await settledNamespace(admin, namespace);
    });

    async function boot(extra: Partial<SnowflakeModuleOptions> = {}, redis: Record<string, unknown> = {}) {
      const module = await Test.createTestingModule({
        imports: [
          SnowflakeModule.forRoot({
            layout: LAYOUT,
            clockBackToleranceMs: 100,
            ...extra,
            redis: { url: server.url, namespace, ...LEASE, ...redis },
          }),
        ],
      }).compile();
      modules.push(module);
      await module.init();
      return { ids: module.get(IdService), module };
    }

    it('1. says so when one process runs several leases in one namespace', async () => {
      const warnings: string[] = [];
      const spy = jestSpyWarn(warnings);
      try {
        const module = await Test.createTestingModule({
          imports: [
            SnowflakeModule.forRoot({
              layout: LAYOUT,
              clockBackToleranceMs: 100,
              redis: { url: server.url, namespace, ...LEASE },
            }),
            SnowflakeModule.forRoot({
              layout: LAYOUT,
              clockBackToleranceMs: 100,
              redis: { url: server.url, namespace, ...LEASE },
            }),
          ],
        }).compile();
        modules.push(module);
        await module.init();
      } finally {
        spy.restore();
      }
      expect(warnings.some((w) => /runs 2 Redis leases in namespace/.test(w) && /isGlobal: true/.test(w))).toBe(true);
    });

    it('2. a clock that ran ahead issues nothing ahead, so a data loss after it leaves it nothing to repeat', async () => {
      const clock = new SteppableClock();
      const { ids: ahead, module } = await boot({ clock });
      const before = ahead.next();
      // NTP steps the clock 30 s forward, later back: nothing is issued in between.
      clock.step(30_000);
      expect(() => ahead.next()).toThrow(expect.objectContaining({ reason: 'clock' }));
      expect(() => ahead.nextBatch(10)).toThrow(expect.objectContaining({ reason: 'clock' }));
      clock.step(-30_000);
      const last = ahead.next();
      expect(last).toBeGreaterThan(before);
      const workerId = ahead.workerId;
      await module.close();
      // Redis loses everything; the next holder of the ID, whose clock is right, starts above the last ID.
      await admin.flushall();
      const { ids: next } = await boot({}, { ttlMs: LEASE.ttlMs });
      expect(next.workerId).toBe(workerId);
      expect(next.next()).toBeGreaterThan(last);
    }, 30_000);

    it('2. a clock-back switch whose release fails leaves a note once Redis answers again', async () => {
      const clock = new SteppableClock(500);
      const { ids } = await boot({ clock });
      const issued = await ids.nextBatchAsync(2000);
      const last = ids.decode(issued[issued.length - 1]);
      const port = server.port;
      await server.stop();
      // 600 ms back: beyond the tolerance, still in sync with the (projected) Redis clock: a switch, whose release
      // cannot reach Redis.
      clock.step(-600);
      expect(() => ids.next()).toThrow(expect.objectContaining({ reason: 'switching' }));
      await sleep(300);
      await server.restart();
      expect(server.port).toBe(port);
      const record = `snowflake:{${namespace}:dc0}:w:${last.workerId}`;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && (await admin.hget(record, 'noted').catch(() => null)) === null) await sleep(50);
      expect(Number(await admin.hget(record, 'noted'))).toBe(last.timestamp);
    }, 30_000);

    it('3. a process never issues below its own last timestamp under a worker ID it held before', async () => {
      const clock = new SteppableClock(500);
      const { ids: a } = await boot({ clock });
      const first = a.workerId;
      const underFirst = await a.nextBatchAsync(2000);
      const lastUnderFirst = underFirst[underFirst.length - 1];
      clock.step(-600);
      expect(() => a.next()).toThrow(expect.objectContaining({ reason: 'switching' }));
      await a.nextAsync();
      expect(a.workerId).not.toBe(first);
      // Redis forgets everything. The holder takes its current ID back; another registration of the same process
      // is handed the first ID with no record at all, and still starts above what this process issued under it.
      await admin.flushall();
      const { ids: b } = await boot();
      expect(b.workerId).toBe(first);
      expect(b.status().lease!.floorMs).toBeGreaterThanOrEqual(a.decode(lastUnderFirst).timestamp);
      expect(b.next()).toBeGreaterThan(lastUnderFirst);
    }, 30_000);

    describe('4. keys deleted while the meta survived', () => {
      const losses: [string, (ns: string) => Promise<unknown>][] = [
        [
          'the cursor and the expiry set',
          (ns) => admin.del(`snowflake:{${ns}:dc0}:cursor`, `snowflake:{${ns}:dc0}:expiry`),
        ],
        ['every record', (ns) => admin.del(`snowflake:{${ns}:dc0}:w:0`, `snowflake:{${ns}:dc0}:w:1`)],
        ['the cursor alone', (ns) => admin.del(`snowflake:{${ns}:dc0}:cursor`)],
      ];
      it.each(losses)(
        'deleting %s hands out no held ID; the holders keep issuing',
        async (_, lose) => {
          const { ids: a } = await boot();
          const generator = issueInBackground([a], 20);
          await sleep(200);
          await lose(namespace);
          // A newcomer finds the namespace settling, not a "free" ID 0 or 1.
          const late = boot();
          await sleep(LEASE.ttlMs / 2);
          const { ids: b } = await late;
          const issuedByB = await b.nextBatchAsync(500);
          expect(b.workerId).not.toBe(a.workerId);
          await generator.stop();
          const all = [...generator.issued, ...issuedByB];
          expect(generator.issued.length).toBeGreaterThan(0);
          expect(new Set(all).size).toBe(all.length);
          expect(a.status().lease!.state).toBe('held');
        },
        30_000,
      );
    });

    describe('round 3', () => {
      const recordKey = (id: number) => `snowflake:{${namespace}:dc0}:w:${id}`;
      const metaKey = () => `snowflake:{${namespace}:dc0}:meta`;

      it('1. records of free IDs deleted again and again, the cursor spent: every boot gets an ID within a margin', async () => {
        // Both IDs claimed once and released: the cursor is spent, the expiry set names both as free.
        const first = [await boot(), await boot()];
        await Promise.all(first.map(({ module }) => module.close()));
        const marker = await admin.hget(metaKey(), 'marker');
        for (let round = 0; round < 3; round++) {
          // What allkeys-lru does first: the records of free IDs, which nothing reads.
          await admin.del(recordKey(0), recordKey(1));
          const started = Date.now();
          const { ids, module } = await boot();
          expect(Date.now() - started).toBeLessThan(LEASE.fenceMarginMs + 2000);
          expect(ids.next()).toBeGreaterThan(0n);
          await module.close();
        }
        expect(await admin.hget(metaKey(), 'marker')).toBe(marker);
      }, 30_000);

      it('2. a canary with a shorter ttlMs that sends the first script after FLUSHALL is refused; the fleet issues on', async () => {
        const fleet = [await boot(), await boot()];
        const holders = fleet.map(({ ids }) => ids);
        const generator = issueInBackground(holders, 20);
        await sleep(200);
        await admin.flushall();
        // The canary's claim is the first script after the loss.
        const canary = await boot({}, { ttlMs: 1000, fenceMarginMs: 500, maxClockOffsetMs: 150 }).catch(
          (e: unknown) => e,
        );
        await generator.stop();
        expect(canary).toBeInstanceOf(LeaseConfigMismatchError);
        expect((canary as Error).message).toContain('ttlMs: namespace 3000, this instance 1000');
        for (const { ids } of fleet) expect(ids.status().lease!.state).toBe('held');
        expect(new Set(generator.issued).size).toBe(generator.issued.length);
        expect(generator.issued.length).toBeGreaterThan(0);
      }, 40_000);

      it('3. an instance with other clock settings (fenceMarginMs, clockBackToleranceMs) is refused, naming them', async () => {
        await boot();
        const other = await boot({ clockBackToleranceMs: 0 }, { fenceMarginMs: 2200 }).catch((e: unknown) => e);
        expect(other).toBeInstanceOf(LeaseConfigMismatchError);
        expect((other as Error).message).toContain('fenceMarginMs: namespace 1500, this instance 2200');
        expect((other as Error).message).toContain('clockBackToleranceMs: namespace 100, this instance 0');
      });

      it('4. a resync from a lagging copy in the same process (REPLICAOF, then NO ONE) hands out no held ID', async () => {
        const lagging = await RedisServer.start();
        const copy = new Redis(lagging.url);
        try {
          // The copy has the namespace as it was before the holder claimed, with this process's identity in it.
          await copy.call('REPLICAOF', '127.0.0.1', String(server.port));
          await waitUntil(
            async () => /master_link_status:up/.test(await copy.info('replication')),
            10_000,
            "the copy's link to the primary",
          );
          await waitUntil(async () => (await copy.exists(metaKey())) === 1, 10_000, 'the meta on the copy');
          await copy.call('REPLICAOF', 'NO', 'ONE');
          // A lease that outlasts the resync (it takes seconds on a busy machine), so that the holder takes its ID
          // back rather than losing it while the primary is a replica.
          const long = { ttlMs: 10_000, fenceMarginMs: 3_000, maxClockOffsetMs: 600 };
          const { ids: a } = await boot({}, long);
          const generator = issueInBackground([a], 20);
          await sleep(200);
          // The primary reloads the copy's older data in the same process: same run_id.
          await admin.call('REPLICAOF', '127.0.0.1', String(lagging.port));
          await waitUntil(
            async () => /master_link_status:up/.test(await admin.info('replication')),
            10_000,
            "the primary's link to the lagging copy",
          );
          await admin.call('REPLICAOF', 'NO', 'ONE');
          expect(await admin.exists(recordKey(a.workerId))).toBe(0);
          const { ids: c } = await boot({}, long);
          const issuedByC = await c.nextBatchAsync(500);
          await generator.stop();
          const all = [...generator.issued, ...issuedByC];
          expect(new Set(all).size).toBe(all.length);
          // The held ID was not handed out (a holder that lost its ID meanwhile would have left a note instead).
          if (a.status().lease!.state === 'held') expect(c.workerId).not.toBe(a.workerId);
        } finally {
          await admin.call('REPLICAOF', 'NO', 'ONE').catch(() => undefined);
          copy.disconnect();
          await lagging.dispose();
        }
      }, 90_000);
    });

    it('no refused ID on a holder whose lease was confirmed when Redis restarted without its data', async () => {
      const { ids } = await boot();
      const refusals: string[] = [];
      const issued: bigint[] = [];
      let running = true;
      const loop = (async () => {
        while (running) {
          try {
            issued.push(ids.next());
          } catch (error) {
            refusals.push((error as { reason?: string }).reason ?? String(error));
          }
          await sleep(1);
        }
      })();
      await sleep(300);
      await server.restart();
      await sleep(LEASE.ttlMs * 1.5);
      running = false;
      await loop;
      expect(refusals).toEqual([]);
      expect(new Set(issued).size).toBe(issued.length);
      expect(ids.status().lease!.state).toBe('held');
      // The namespace settled meanwhile, for newcomers only.
      expect(await admin.hget(`snowflake:{${namespace}:dc0}:w:${ids.workerId}`, 'token')).not.toBeNull();
    }, 30_000);
  });
});

function jestSpyWarn(into: string[]) {
  const original = Logger.prototype.warn;
  Logger.prototype.warn = function (this: Logger, message: unknown, ...rest: unknown[]) {
    into.push(String(message));
    return original.call(this, message, ...(rest as []));
  } as typeof Logger.prototype.warn;
  return { restore: () => (Logger.prototype.warn = original) };
}
