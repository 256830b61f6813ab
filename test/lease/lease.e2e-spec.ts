import 'reflect-metadata';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import {
  ClockOutOfSyncError,
  IdService,
  LeaseConfigMismatchError,
  LeaseExhaustedError,
  LeaseLayoutChangeError,
  RedisUnavailableError,
  SnowflakeModule,
  WorkerUnavailableError,
  type SnowflakeModuleOptions,
} from '../../lib/index.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { RedisServer } from '../support/redis-server.js';
import { SteppableClock, sleep } from '../support/time.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';

/** A layout with a 3-bit worker field: eight IDs to hand out. */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
const TTL = 1000;

describe('Redis worker-ID lease (real redis-server)', () => {
  let server: RedisServer;
  let admin: Redis;
  const modules: TestingModule[] = [];
  let namespaceCounter = 0;
  let namespace: string;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });

  afterAll(async () => {
    admin.disconnect();
    await server.dispose();
  });

  beforeEach(async () => {
    namespace = `ns${++namespaceCounter}`;
    await settledNamespace(admin, namespace);
  });

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
  });

  async function boot(
    extra: Partial<SnowflakeModuleOptions> = {},
    redis: Record<string, unknown> = {},
  ): Promise<IdService> {
    const module = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          ...extra,
          // A given client replaces the URL: the module takes exactly one of them.
          redis: { ...(redis.client === undefined && { url: server.url }), namespace, ttlMs: TTL, ...redis },
        }),
      ],
    }).compile();
    modules.push(module);
    await module.init();
    return module.get(IdService);
  }

  const record = (id: number) => admin.hgetall(`snowflake:{${namespace}:dc0}:w:${id}`);

  it('claims a worker ID before serving, records it in Redis, renews it and releases it with the exact last timestamp', async () => {
    const ids = await boot();
    expect(ids.status().lease?.state).toBe('held');
    expect(ids.workerId).toBe(0);
    const first = ids.next();
    expect(ids.decode(first).workerId).toBe(0);

    const claimed = await record(0);
    expect(claimed.token).toMatch(/^[0-9a-f-]{36}$/);
    // One TTL above the claim (made while the module was built), and above the first ID.
    expect(Number(claimed.ceiling)).toBeGreaterThanOrEqual(Number(claimed.claimed) + TTL - 50);
    expect(Number(claimed.ceiling)).toBeGreaterThan(ids.decode(first).timestamp);
    expect(claimed.pid).toBe(String(process.pid));

    const renewedBefore = ids.status().lease!.lastRenewalAt!;
    await sleep(TTL * 1.5);
    const lease = ids.status().lease!;
    expect(lease.lastRenewalAt!).toBeGreaterThan(renewedBefore);
    expect(lease.fenceInMs!).toBeGreaterThan(0);
    expect(lease.clockOffsetMs).not.toBeNull();
    // The reported expiry is the lease's score in Redis (server ms), moved into the local clock by the offset. A
    // renewal landing between the two reads moves the score: read again then.
    let expiryGap = Infinity;
    for (let attempt = 0; attempt < 5 && expiryGap > 1; attempt++) {
      const score = Number(await admin.zscore(`snowflake:{${namespace}:dc0}:expiry`, '0'));
      const reported = ids.status().lease!;
      expiryGap = Math.abs(reported.expiresAt! - (score + reported.clockOffsetMs!));
    }
    expect(expiryGap).toBeLessThanOrEqual(1);
    const last = ids.next();
    expect(last).toBeGreaterThan(first);

    await modules.pop()!.close();
    const released = await record(0);
    expect(released.token).toBeUndefined();
    expect(Number(released.ceiling)).toBe(ids.decode(last).timestamp);
    expect(() => ids.next()).toThrow(WorkerUnavailableError);
  });

  it('hands out never-used IDs first, then the one whose lease expired longest ago, then fails naming the namespace', async () => {
    const holders: IdService[] = [];
    for (let i = 0; i < 4; i++) holders.push(await boot());
    expect(holders.map((h) => h.workerId)).toEqual([0, 1, 2, 3]);

    // Release 2, then 0, while 4 to 7 were never used: the never-used ones go first, in order.
    await modules[2].close();
    await sleep(20);
    await modules[0].close();
    for (let i = 0; i < 4; i++) holders.push(await boot());
    expect(holders.slice(4).map((h) => h.workerId)).toEqual([4, 5, 6, 7]);
    // Then the released ones, by expiry rather than by number: 2 expired before 0.
    expect((await boot()).workerId).toBe(2);
    expect((await boot()).workerId).toBe(0);

    const error = await boot().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseExhaustedError);
    expect((error as Error).message).toContain(`namespace "${namespace}"`);
    expect((error as LeaseExhaustedError).held).toBe(8);

    // The other way round: release 5 (module 5), then 1 (module 1): the next claims take 5, then 1.
    await modules[5].close();
    await sleep(20);
    await modules[1].close();
    expect((await boot()).workerId).toBe(5);
    expect((await boot()).workerId).toBe(1);
  });

  it('never lets a stale token renew: a holder whose ID was taken stops issuing under it and claims another', async () => {
    const ids = await boot();
    const stolen = ids.workerId;
    const issued = [ids.next()];
    const expiryKey = `snowflake:{${namespace}:dc0}:expiry`;
    await admin.hset(`snowflake:{${namespace}:dc0}:w:${stolen}`, 'token', 'someone-else');
    const expiryAtTheft = await admin.zscore(expiryKey, String(stolen));
    // A live lease owned by another token under the same marker can only come from a rollback (or an operator): the
    // holder stops at once, and the namespace settles before it claims again.
    for (let waited = 0; ids.workerId === stolen && waited < SETTLE_AFTER_LOSS_MS + TTL * 3; waited += 20) {
      try {
        issued.push(...ids.nextBatch(10));
      } catch (error) {
        // Between the loss and the new claim nothing is issued: refusals are the point.
        expect(error).toBeInstanceOf(WorkerUnavailableError);
      }
      await sleep(20);
    }
    expect(ids.workerId).not.toBe(stolen);
    expect(ids.decode(ids.next()).workerId).toBe(ids.workerId);
    expect(ids.status().lease!.switches).toBe(1);
    // The stale token's renewal changed nothing: the lease's expiry stayed where the theft left it, and the record's
    // ceiling only rose to the old holder's last timestamp (its note), so the new owner's IDs stay above it.
    expect(await admin.zscore(expiryKey, String(stolen))).toBe(expiryAtTheft);
    const underStolen = issued.filter((id) => ids.decode(id).workerId === stolen);
    const lastUnderStolen = Math.max(...underStolen.map((id) => ids.decode(id).timestamp));
    const after = await record(stolen);
    expect(after.token).toBe('someone-else');
    expect(Number(after.ceiling)).toBeGreaterThanOrEqual(lastUnderStolen);
  });

  describe('shutting down when its record is no longer its own', () => {
    const keys = () => leaseKeys({ namespace, allocateDatacenter: false }, 0);
    let warn: ReturnType<typeof jest.spyOn>;

    beforeEach(() => {
      warn = jest.spyOn(Logger.prototype, 'warn');
    });

    afterEach(() => {
      warn.mockRestore();
    });

    /** A holder whose renewal comes late, so that the shutdown, not a renewal, is the first to find the loss. */
    const bootSlowRenewal = () => boot({}, { renewIntervalMs: 700 });

    const expectNotedAtShutdown = (workerId: number) =>
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining(`Worker ID ${workerId} in namespace "${namespace}" was no longer ours at shutdown`),
      );

    it('notes its exact last timestamp on the record Redis lost, so the next holder of the ID issues above it', async () => {
      const lost = await bootSlowRenewal();
      const last = lost.next();
      const lastMs = lost.decode(last).timestamp;
      // Redis loses the namespace (a restart without persistence) while the holder still runs.
      const { meta, cursor, expiry, recordPrefix } = keys();
      await admin.del(meta, cursor, expiry, `${recordPrefix}${lost.workerId}`);
      await modules.pop()!.close();

      expectNotedAtShutdown(0);
      const noted = await record(0);
      expect(Number(noted.ceiling)).toBe(lastMs);
      expect(noted.token).toBeUndefined();

      // The recreated namespace settles for one ttl, then hands out ID 0 again, with the note as its floor.
      const next = await boot();
      expect(next.workerId).toBe(0);
      expect(next.status().lease!.floorMs).toBe(lastMs);
      expect(next.decode(next.next()).timestamp).toBeGreaterThan(lastMs);
    });

    it('raises the ceiling of a record another token took to its exact last timestamp', async () => {
      const overtaken = await bootSlowRenewal();
      const lastMs = overtaken.decode(overtaken.next()).timestamp;
      // Another holder took the ID with a ceiling below what this one issued (its clock ran behind).
      await admin.hset(`${keys().recordPrefix}0`, 'token', 'someone-else', 'ceiling', lastMs - 5000);
      await modules.pop()!.close();

      expectNotedAtShutdown(0);
      const noted = await record(0);
      expect(Number(noted.ceiling)).toBe(lastMs);
      expect(noted.token).toBe('someone-else');
    });
  });

  /**
   * Room for a clock that is ahead of Redis's yet in sync, and then steps back beyond the tolerance while staying in
   * sync: 100 + 2 × 600 + 1 ≤ 1500.
   */
  const ROOMY = { ttlMs: 4000, fenceMarginMs: 1500, maxClockOffsetMs: 600 };

  it('refuses IDs while the wall clock disagrees with the Redis server clock, and resumes once it agrees', async () => {
    const clock = new SteppableClock();
    const ids = await boot({ clock });
    const before = ids.next();
    expect(ids.status().lease!.clockInSync).toBe(true);
    // A step forward (or back) is seen on the very next ID, not at the next renewal.
    clock.step(30_000);
    expect(() => ids.next()).toThrow(expect.objectContaining({ name: 'WorkerUnavailableError', reason: 'clock' }));
    expect(ids.status().ready).toBe(false);
    expect(ids.status().lease).toMatchObject({ state: 'held', clockInSync: false });
    expect(Math.abs(ids.status().lease!.clockOffsetMs! - 30_000)).toBeLessThan(100);
    clock.step(-30_000 - 5000);
    expect(() => ids.next()).toThrow(expect.objectContaining({ reason: 'clock' }));
    clock.step(5000);
    const after = ids.next();
    expect(after).toBeGreaterThan(before);
    expect(ids.workerId).toBe(ids.decode(before).workerId);
  });

  it('claims nothing while the wall clock disagrees with the Redis server clock', async () => {
    const ahead = new SteppableClock();
    ahead.step(5000);
    const error = await boot({ clock: ahead }, { bootstrapAttempts: 2, retryBackoffMs: 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClockOutOfSyncError);
    expect((error as Error).message).toMatch(/stands 5\d\d\d ms from the Redis server's clock/);
    // The claim was given back: nothing is held in the namespace.
    expect(await admin.zcount(`snowflake:{${namespace}:dc0}:expiry`, `(${Date.now()}`, '+inf')).toBe(0);
  });

  it('switches worker ID when the clock steps back beyond the tolerance, instead of failing', async () => {
    const clock = new SteppableClock();
    clock.step(500);
    const ids = await boot({ clock, clockBackToleranceMs: 100 }, ROOMY);
    const before = ids.workerId;
    const issued = await ids.nextBatchAsync(20_000);
    const last = issued[issued.length - 1];
    // 600 ms back: beyond the tolerance, and still within maxClockOffsetMs of Redis's clock.
    clock.step(-600);
    expect(() => ids.next()).toThrow(WorkerUnavailableError);
    const next = await ids.nextAsync();
    expect(ids.workerId).not.toBe(before);
    expect(ids.decode(next).workerId).toBe(ids.workerId);
    // Under the new ID, on the stepped-back clock: every ID new, and none under the old worker ID.
    const afterSwitch = [next, ...(await ids.nextBatchAsync(20_000))];
    expect(afterSwitch.every((id) => ids.decode(id).workerId === ids.workerId)).toBe(true);
    expect(new Set([...issued, ...afterSwitch]).size).toBe(issued.length + afterSwitch.length);
    // The old ID was released with its exact last timestamp, so its next holder starts above it.
    expect(Number((await record(before)).ceiling)).toBe(ids.decode(last).timestamp);
  });

  it('takes its own ID back when the clock steps back in a full namespace, above its last timestamp', async () => {
    const layout = { ...LAYOUT, workerBits: 1 };
    const clock = new SteppableClock();
    clock.step(500);
    const ids = await boot({ layout, clock, clockBackToleranceMs: 100 }, ROOMY);
    const other = await boot({ layout, clockBackToleranceMs: 100 }, ROOMY);
    const before = ids.workerId;
    const issued = await ids.nextBatchAsync(5000);
    // 600 ms back: beyond the tolerance, within maxFloorWaitMs (2 s), and the namespace's other ID is held.
    clock.step(-600);
    expect(() => ids.next()).toThrow(WorkerUnavailableError);
    const next = await ids.nextAsync();
    expect(ids.workerId).toBe(before);
    expect(ids.status().lease!.state).toBe('held');
    expect(next).toBeGreaterThan(issued[issued.length - 1]);
    const after = [next, ...(await ids.nextBatchAsync(5000))];
    expect(new Set([...issued, ...after]).size).toBe(issued.length + after.length);
    expect(other.workerId).not.toBe(before);
  });

  it('refuses to join a namespace whose live holders run another contract, and names each difference', async () => {
    await boot();
    const ttlError = await boot({}, { ttlMs: 2 * TTL }).catch((e: unknown) => e);
    expect(ttlError).toBeInstanceOf(LeaseConfigMismatchError);
    expect((ttlError as Error).message).toContain(`Namespace "${namespace}"`);
    expect((ttlError as Error).message).toContain(`ttlMs: namespace ${TTL}, this instance ${2 * TTL}`);
    const layoutError = await boot({ layout: { ...LAYOUT, sequenceBits: 11 } }).catch((e: unknown) => e);
    expect(layoutError).toBeInstanceOf(LeaseConfigMismatchError);
    expect((layoutError as Error).message).toContain('layout: namespace 41/0/3/12, this instance 41/0/3/11');

    // Once no lease is live, the namespace takes the new configuration.
    await Promise.all(modules.splice(0).map((m) => m.close()));
    const changed = await boot({}, { ttlMs: 2 * TTL });
    expect(changed.status().lease!.state).toBe('held');
    expect(await admin.hget(`snowflake:{${namespace}:dc0}:meta`, 'config')).toContain(`ttlMs=${2 * TTL} `);
  });

  it('refuses, at bootstrap, a layout whose IDs would lie among those the namespace issued, and takes one above', async () => {
    const fleet = await boot();
    const issued = fleet.next();
    await Promise.all(modules.splice(0).map((m) => m.close()));
    // An epoch a day later: the same instant gives timestamps a day lower, among the IDs already issued.
    const later = { ...LAYOUT, epoch: fleet.layout.epoch + 24 * 3600_000 };
    const error = await boot({ layout: later }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseLayoutChangeError);
    expect((error as Error).message).toContain(`Namespace "${namespace}" issued IDs under another layout`);
    expect((error as Error).message).toContain(`epoch: namespace ${fleet.layout.epoch}, this instance ${later.epoch}`);
    expect((error as LeaseLayoutChangeError).waitMs).toBeGreaterThan(24 * 3600_000);
    // An epoch a day earlier issues above every old ID: taken at once.
    const earlier = await boot({ layout: { ...LAYOUT, epoch: fleet.layout.epoch - 24 * 3600_000 } });
    expect(earlier.status().lease!.state).toBe('held');
    expect(earlier.next()).toBeGreaterThan(issued);
  });

  it("waits for the clock to pass a reused ID's previous ceiling", async () => {
    const layout = { ...LAYOUT, workerBits: 1 };
    await boot({ layout });
    await boot({ layout });
    await modules[0].close();
    // The previous holder's last timestamp lies 300 ms ahead of this clock: the new holder waits, then issues above.
    const ceiling = Date.now() + 300;
    await admin.hset(`snowflake:{${namespace}:dc0}:w:0`, 'ceiling', ceiling);
    const started = Date.now();
    const waiting = await boot({ layout }, { maxFloorWaitMs: 1000 });
    expect(waiting.workerId).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(waiting.status().lease!.floorMs).toBe(ceiling);
    expect(waiting.decode(waiting.next()).timestamp).toBeGreaterThan(ceiling);
  });

  it("takes another ID when a reused ID's previous ceiling is further ahead than maxFloorWaitMs", async () => {
    const layout = { ...LAYOUT, workerBits: 1 };
    await boot({ layout });
    await boot({ layout });
    await modules[0].close();
    await modules[1].close();
    // ID 0 expired longest ago, but its previous holder's clock ran a minute ahead of ours.
    const ahead = Date.now() + 60_000;
    await admin.hset(`snowflake:{${namespace}:dc0}:w:0`, 'ceiling', ahead);
    const ids = await boot({ layout }, { maxFloorWaitMs: 1000 });
    expect(ids.workerId).toBe(1);
    const skipped = await record(0);
    expect(Number(skipped.ceiling)).toBe(ahead);
    expect(skipped.token).toBeUndefined();
  });

  it('fails bootstrap with a clear error after bounded retries when Redis is unreachable, leaving nothing running', async () => {
    const down = await RedisServer.start();
    await down.stop();
    try {
      const started = Date.now();
      const error = await Test.createTestingModule({
        imports: [
          SnowflakeModule.forRoot({
            layout: LAYOUT,
            redis: {
              url: down.url,
              namespace,
              ttlMs: TTL,
              bootstrapAttempts: 3,
              retryBackoffMs: 50,
              connectTimeoutMs: 300,
            },
          }),
        ],
      })
        .compile()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message).toMatch(/after 3 attempts/);
      expect(Date.now() - started).toBeLessThan(5000);

      // Nothing may keep trying: Redis comes back on the same port, and no connection from the module arrives.
      // (Counting process.getActiveResourcesInfo() does not tell: ioredis keeps a ref'd 2 s timer after closing a
      // client that never connected, even though it no longer reconnects.) A client left reconnecting would retry
      // within a few hundred ms here (retryBackoffMs × attempts so far), so one second is ample.
      await down.restart();
      await sleep(1000);
      const probe = new Redis(down.url);
      try {
        const clients = String(await probe.client('LIST'))
          .trim()
          .split('\n');
        expect(clients).toHaveLength(1); // the probe itself
      } finally {
        probe.disconnect();
      }
    } finally {
      await down.dispose();
    }
  });

  it('fences itself after an event-loop stall past its TTL, before any reply from Redis can arrive', async () => {
    const ids = await boot();
    const before = ids.next();
    // A stall (a long GC, a blocking call) during which no timer, renewal or reply runs; Redis itself is fine.
    const until = performance.now() + TTL + 100;
    while (performance.now() < until) {
      // busy wait: the event loop is held
    }
    // Still inside the same synchronous turn: the only thing that can stop it is its own monotonic fence.
    expect(() => ids.next()).toThrow(expect.objectContaining({ reason: 'fenced' }));
    // Once the loop runs again the lease renews (or re-claims) and issuing resumes, above the IDs before the stall.
    expect(await ids.nextAsync()).toBeGreaterThan(before);
  });

  it('keeps issuing while the lease is confirmed, fences itself when Redis stays away, and resumes when it returns', async () => {
    const own = await RedisServer.start();
    try {
      const module = await Test.createTestingModule({
        imports: [
          SnowflakeModule.forRoot({
            layout: LAYOUT,
            redis: { url: own.url, namespace, ttlMs: TTL, retryBackoffMs: 50, connectTimeoutMs: 200 },
          }),
        ],
      }).compile();
      modules.push(module);
      await module.init();
      const ids = module.get(IdService);
      const before = ids.next();
      await own.stop();
      expect(ids.next()).toBeGreaterThan(before); // still within the confirmed lease
      await sleep(TTL);
      expect(() => ids.next()).toThrow(expect.objectContaining({ reason: 'fenced' }));
      expect(ids.status().lease!.state).toBe('fenced');
      expect(ids.status().lease!.renewalFailures).toBeGreaterThan(0);

      await own.restart(); // empty: the lease record is gone, so the holder re-claims after settling
      // Settling (12 s) outlasts the default bound of maxAsyncWaitMs: a caller that can wait that long says so.
      const resumed = await ids.nextAsync({ timeoutMs: 30_000 });
      expect(resumed).toBeGreaterThan(before);
      expect(ids.status().lease!.state).toBe('held');
    } finally {
      await own.dispose();
    }
  });

  it('never closes a client it was given, and closes the one it created', async () => {
    const client = new Redis(server.url);
    const module = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ layout: LAYOUT, redis: { client, namespace, ttlMs: TTL } })],
    }).compile();
    await module.init();
    expect(module.get(IdService).workerId).toBe(0);
    await module.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    client.disconnect();

    const connections = async () =>
      String(await admin.client('LIST'))
        .trim()
        .split('\n').length;
    await sleep(50);
    const before = await connections();
    const created = await boot();
    expect(created.workerId).toBe(1);
    expect(await connections()).toBe(before + 1);
    await modules.pop()!.close();
    await sleep(50);
    expect(await connections()).toBe(before);
  });

  it('connects a lazyConnect client it was given, instead of waiting out the connect timeout', async () => {
    const client = new Redis(server.url, { lazyConnect: true });
    try {
      const started = Date.now();
      const ids = await boot({}, { client, connectTimeoutMs: 5000 });
      expect(ids.status().lease!.state).toBe('held');
      // One TTL of first-use settling, but not the 5 s connect timeout on top of it.
      expect(Date.now() - started).toBeLessThan(TTL + 3000);
    } finally {
      await Promise.all(modules.splice(0).map((m) => m.close()));
      client.disconnect();
    }
  });

  it('hands out datacenter and worker bits together with allocateDatacenter', async () => {
    const layout = { timestampBits: 41, datacenterBits: 1, workerBits: 1, sequenceBits: 12 };
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const ids = await boot({ layout }, { allocateDatacenter: true });
      const parts = ids.decode(ids.next());
      seen.push(`${parts.datacenterId}/${parts.workerId}`);
    }
    expect(seen).toEqual(['0/0', '0/1', '1/0', '1/1']);
  });

  it('rejects invalid lease options at bootstrap, naming the option', async () => {
    const attempt = (redis: Record<string, unknown>) =>
      Test.createTestingModule({ imports: [SnowflakeModule.forRoot({ layout: LAYOUT, redis: redis })] })
        .compile()
        .catch((e: unknown) => e);
    expect(String(await attempt({}))).toMatch(/`redis`.*exactly one of/);
    expect(String(await attempt({ url: 'http://x' }))).toMatch(/`redis.url`/);
    expect(String(await attempt({ url: server.url, ttlMs: 10 }))).toMatch(/`redis.ttlMs`/);
    expect(String(await attempt({ url: server.url, namespace: 'a b' }))).toMatch(/`redis.namespace`/);
    expect(String(await attempt({ url: server.url, ttlMs: 1000, renewIntervalMs: 900 }))).toMatch(
      /`redis.renewIntervalMs`/,
    );
  });
});
