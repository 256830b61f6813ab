import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { SnowflakeHealthIndicator } from '../../lib/health.js';
import { IdService, SnowflakeModule, WorkerUnavailableError } from '../../lib/index.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { sleep, waitUntil } from '../support/time.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { getHealth, HealthModule, pollHealth, snowflakeOf } from './health.fixture.js';

const TTL_MS = 1500;

describe('SnowflakeHealthIndicator with a Redis lease (real redis-server)', () => {
  let redis: RedisServer;
  let app: INestApplication;
  let ids: IdService;

  beforeAll(async () => {
    redis = await RedisServer.start();
    // The last test is about a Redis that lost its data: its settling is real. The first boots are not about it.
    await settledNamespace(redis.url, 'health-spec');
    await settledNamespace(redis.url, 'health-spec-skewed');
    const moduleRef = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          redis: { url: redis.url, namespace: 'health-spec', ttlMs: TTL_MS, connectTimeoutMs: 300, retryBackoffMs: 50 },
        }),
        HealthModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    ids = app.get(IdService);
  });

  afterAll(async () => {
    await app?.close();
    await redis?.dispose();
  });

  it('reports up with the lease details while the lease is held', async () => {
    ids.next();
    const { status, body } = await getHealth(app);
    expect(status).toBe(200);
    const details = snowflakeOf(body);
    expect(details).toMatchObject({
      status: 'up',
      source: 'redis',
      workerId: ids.workerId,
      datacenterId: 0,
      namespace: 'health-spec',
      leaseState: 'held',
      renewalFailures: 0,
      issued: 1,
      clockBehindMs: 0,
    });
    expect(details.leaseExpiresInMs).toBeGreaterThan(0);
    expect(details.leaseExpiresInMs).toBeLessThanOrEqual(TTL_MS + 250);
    expect(details.fenceInMs).toBeGreaterThan(0);
    // Same machine, same clock: the offset to Redis is the round-trip error at most.
    expect(Math.abs(details.clockOffsetMs as number)).toBeLessThan(250);
    expect(Date.now() - Date.parse(details.lastRenewalAt as string)).toBeLessThan(TTL_MS);
  });

  it('reports down while the clock disagrees with the Redis server clock, measuring the expiry in that clock', async () => {
    // A clock that steps an hour ahead: no IDs are issued, health says why, and the lease expiry is converted into
    // this clock (measured against Date.now() it would read about an hour).
    let offsetMs = 0;
    const skewed = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          redis: { url: redis.url, namespace: 'health-spec-skewed', ttlMs: TTL_MS },
          clock: { now: () => Date.now() + offsetMs },
        }),
        HealthModule,
      ],
    }).compile();
    const skewedApp = skewed.createNestApplication({ logger: false });
    try {
      await skewedApp.init();
      expect((await getHealth(skewedApp)).status).toBe(200);
      offsetMs = 3_600_000;
      const { status, body } = await getHealth(skewedApp);
      expect(status).toBe(503);
      const details = snowflakeOf(body);
      expect(details).toMatchObject({ reason: 'clock-out-of-sync', clockInSync: false, leaseState: 'held' });
      // Loose bounds: the offset estimate includes a loopback round trip, slow on a loaded machine.
      expect(Math.abs((details.clockOffsetMs as number) - offsetMs)).toBeLessThan(250);
      expect(details.leaseExpiresInMs).toBeGreaterThan(0);
      expect(details.leaseExpiresInMs).toBeLessThanOrEqual(TTL_MS + 250);
      offsetMs = 0;
      expect((await getHealth(skewedApp)).status).toBe(200);
    } finally {
      await skewedApp.close();
    }
  });

  it('stays up across renewals', async () => {
    await new Promise((resolve) => setTimeout(resolve, TTL_MS));
    const { status, body } = await getHealth(app);
    expect(status).toBe(200);
    expect(snowflakeOf(body).renewalFailures).toBe(0);
    expect(Date.now() - Date.parse(snowflakeOf(body).lastRenewalAt as string)).toBeLessThan(TTL_MS / 2);
  });

  it('reports the namespace capacity in the details, up however few IDs are free', async () => {
    const details = snowflakeOf((await getHealth(app)).body);
    const { capacity } = ids.status().lease!;
    expect(capacity).not.toBeNull();
    expect(details).toMatchObject({
      status: 'up',
      capacity: { size: 1024, held: 1, free: 1023, low: false, checkedAt: new Date(capacity!.checkedAt).toISOString() },
      lowCapacityAtFree: 103,
    });
  });

  it('shows the last error while renewals fail, and no stale one once a renewal succeeds again', async () => {
    const indicator = app.get(SnowflakeHealthIndicator);
    // A threshold that keeps the indicator down whatever the lease does, so that its message is always there to read.
    const strict = { minFenceInMs: 10 * TTL_MS };
    const admin = new Redis(redis.url);
    try {
      // Redis stops answering for longer than a command's timeout (300 ms): renewals fail, then succeed again.
      await admin.call('CLIENT', 'PAUSE', '900', 'ALL');
      await waitUntil(() => ids.status().lease!.renewalFailures > 0, 2 * TTL_MS, 'a failed renewal');
      const failing = indicator.isHealthy('snowflake', strict).snowflake;
      expect(failing.status).toBe('down');
      expect(failing.message).toContain('Last error: ');
      expect(ids.status().lease!.lastError).not.toBeNull();

      // A reply that the pause delayed without timing it out measures the clock with a wide error (out of sync until
      // the next renewal measures again): wait for a renewal that is both confirmed and measured in sync.
      await waitUntil(
        () => ids.status().lease!.renewalFailures === 0 && ids.status().lease!.clockInSync,
        4 * TTL_MS,
        'a renewal after the pause',
      );
      expect(ids.status().lease).toMatchObject({ state: 'held', lastError: null });
      const recovered = indicator.isHealthy('snowflake', strict).snowflake;
      expect(recovered).toMatchObject({ status: 'down', reason: 'lease-lapsing', renewalFailures: 0 });
      expect(recovered.message).not.toContain('Last error');
      expect(indicator.isHealthy().snowflake.status).toBe('up');
    } finally {
      admin.disconnect();
    }
  });

  it('reports down when Redis stops, fenced once the lease lapses, and up again after Redis returns', async () => {
    await redis.stop();

    // Renewals fail first: down before the lease fences, while IDs are still being issued under a confirmed lease.
    const failing = await pollHealth(app, (status) => status === 503, TTL_MS);
    expect(failing).toMatchObject({ status: 'down', reason: 'renewals-failing', leaseState: 'held' });
    expect(failing.fenceInMs as number).toBeGreaterThan(0);

    const fenced = await pollHealth(app, (_, details) => details.leaseState === 'fenced', 2 * TTL_MS);
    expect(fenced).toMatchObject({ status: 'down', reason: 'lease-not-held', fenceInMs: 0 });
    expect(fenced.message).toContain('fenced');
    expect(fenced.message).toContain('Last error: ');
    expect(fenced.renewalFailures as number).toBeGreaterThanOrEqual(2);
    // The indicator and the generator agree: fenced means no IDs.
    expect(() => ids.next()).toThrow(WorkerUnavailableError);

    // An empty Redis on the same port: the holder finds its lease gone, waits for the namespace to settle, re-claims.
    // Fenced locally is not yet lapsed on the server: the last renewal ran up to a round trip after it was sent, and a
    // renewal arriving within that slack still takes the ID back. One TTL more leaves no proof to make.
    await sleep(TTL_MS);
    await redis.restart();
    const up = await pollHealth(app, (status) => status === 200, SETTLE_AFTER_LOSS_MS + 4 * TTL_MS + 3000);
    expect(up).toMatchObject({ status: 'up', leaseState: 'held', renewalFailures: 0 });
    // Nothing of the outage is left as a current error once a claim is confirmed.
    expect(up.message).toBeUndefined();
    expect(ids.status().lease!.lastError).toBeNull();
    expect(up.switches as number).toBeGreaterThanOrEqual(1);
    expect(ids.decode(ids.next()).workerId).toBe(up.workerId);
  });
});
