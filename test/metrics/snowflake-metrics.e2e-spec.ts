/**
 * SnowflakeMetricsModule over a Redis lease on a real redis-server: lease state, fence headroom, clock offset and the
 * renewal histogram while renewals succeed; failures by cause, the failure streak and the fence once the server is
 * stopped. Held and free worker IDs follow the lease's `capacity` once its status carries one.
 */
import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeMetricsModule } from '../../lib/metrics.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { testMeterProvider, type Collected } from '../support/metric-reader.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep } from '../support/time.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const TTL_MS = 1500;
/** ttl - fence margin (ttl / 5): the most headroom a renewal can leave. */
const MAX_HEADROOM_S = (TTL_MS - TTL_MS / 5) / 1000;

/**
 * The lease's count of its namespace's worker IDs: undefined while `LeaseStatus` has no such field, null until the
 * lease has counted. Read structurally, as the metrics read it.
 */
function capacityOf(ids: IdService): { held: number; free: number } | null | undefined {
  return ids.status().lease?.capacity;
}

/** Collects until `condition` holds on a collection, or fails naming `what` with the last one's instruments. */
async function collectUntil(
  collect: () => Promise<Collected>,
  condition: (collected: Collected) => boolean,
  timeoutMs: number,
  what: string,
): Promise<Collected> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const collected = await collect();
    if (condition(collected)) return collected;
    if (Date.now() > deadline) {
      const seen = collected.names().map((name) => `${name}: ${JSON.stringify(collected.points(name))}`);
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}\n${seen.join('\n')}`);
    }
    await sleep(50);
  }
}

describe('SnowflakeMetricsModule with a Redis lease (real redis-server)', () => {
  let redis: RedisServer;
  let moduleRef: TestingModule;
  let ids: IdService;
  const { provider, collect } = testMeterProvider();

  beforeAll(async () => {
    redis = await RedisServer.start();
    // The last test is about an empty Redis returning: its settling is real. The first claim is not about it.
    await settledNamespace(redis.url, 'metrics-e2e');
    moduleRef = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          redis: { url: redis.url, namespace: 'metrics-e2e', ttlMs: TTL_MS, connectTimeoutMs: 300, retryBackoffMs: 50 },
        }),
        SnowflakeMetricsModule.forRoot({ meterProvider: provider }),
      ],
    })
      .setLogger(quiet)
      .compile();
    await moduleRef.init();
    ids = moduleRef.get(IdService);
  });

  afterAll(async () => {
    await moduleRef?.close();
    await redis?.dispose();
  });

  it('reports the held lease, its headroom and clock offset, and a histogram of renewal round trips', async () => {
    ids.next();
    const collected = await collectUntil(
      collect,
      (c) =>
        (c.histogram('snowflake.lease.renewal.duration', { 'snowflake.lease.renewal.outcome': 'renewed' })?.count ??
          0) >= 2,
      10 * TTL_MS,
      'two renewals in the histogram',
    );
    expect(collected.value('snowflake.lease.state', { 'snowflake.lease.state': 'held' })).toBe(1);
    expect(collected.points('snowflake.lease.state').filter((p) => p.value === 1)).toHaveLength(1);
    expect(collected.value('snowflake.ready')).toBe(1);
    expect(collected.value('snowflake.ids.issued')).toBe(1);

    const headroom = collected.value('snowflake.lease.fence.headroom')!;
    expect(headroom).toBeGreaterThan(0);
    expect(headroom).toBeLessThanOrEqual(MAX_HEADROOM_S);
    // Same machine, same clock: the offset to Redis is the round trip's error at most.
    expect(Math.abs(collected.value('snowflake.lease.clock.offset')!)).toBeLessThan(0.25);
    expect(collected.value('snowflake.lease.renewal.consecutive_failures')).toBe(0);
    expect(collected.value('snowflake.lease.renewal.age')).toBeLessThan(TTL_MS / 1000);
    expect(collected.value('snowflake.worker.switches')).toBe(0);
    expect(collected.points('snowflake.lease.renewal.failures')).toEqual([]);

    const renewals = collected.histogram('snowflake.lease.renewal.duration', {
      'snowflake.lease.renewal.outcome': 'renewed',
    })!;
    // Round trips to a local redis-server: well under a second each, but measured (not zero).
    expect(renewals.sum!).toBeGreaterThan(0);
    expect(renewals.sum! / renewals.count).toBeLessThan(1);
    expect(renewals.buckets.boundaries).toEqual([
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]);
    expect(collected.metric('snowflake.lease.renewal.duration')?.descriptor.unit).toBe('s');
  });

  it('publishes held and free worker IDs once the lease status carries its capacity', async () => {
    // The lease counts its namespace after it starts (null until then): wait for a collection that has the gauges.
    const counted = await collectUntil(
      collect,
      (c) => c.value('snowflake.worker_ids.held') !== undefined,
      10 * TTL_MS,
      'the lease to count its namespace',
    );
    // Alone in its namespace, this instance sees the same counts in its status and in the gauges.
    const capacity = capacityOf(ids)!;
    expect(counted.value('snowflake.worker_ids.held')).toBe(capacity.held);
    expect(counted.value('snowflake.worker_ids.free')).toBe(capacity.free);
    expect(capacity.held).toBe(1);
  });

  it('counts failed renewals by cause once Redis is gone, then shows the lease fenced with no headroom', async () => {
    await redis.stop();
    const failing = await collectUntil(
      collect,
      (c) => (c.value('snowflake.lease.renewal.consecutive_failures') ?? 0) >= 2,
      10 * TTL_MS,
      'two renewal failures in a row',
    );
    const failures = failing.points('snowflake.lease.renewal.failures');
    expect(failures.length).toBeGreaterThanOrEqual(1);
    for (const { attributes, value } of failures) {
      expect(value).toBeGreaterThanOrEqual(1);
      expect(attributes['snowflake.lease.renewal.outcome']).toBe('failed');
      // The cause is a classified code (connection refused, timed out, the client's own closed-connection error),
      // never the error's free text.
      expect(attributes['error.type']).toMatch(/^[A-Z][A-Z0-9_]+$/);
    }
    const total = failures.reduce((sum, point) => sum + point.value, 0);
    expect(total).toBeGreaterThanOrEqual(2);
    // Failed round trips are timed too, under their own outcome.
    expect(
      failing
        .points('snowflake.lease.renewal.duration')
        .some((p) => p.attributes['snowflake.lease.renewal.outcome'] === 'failed'),
    ).toBe(true);

    const fenced = await collectUntil(
      collect,
      (c) => c.value('snowflake.lease.state', { 'snowflake.lease.state': 'fenced' }) === 1,
      10 * TTL_MS,
      'the lease to fence itself',
    );
    expect(fenced.value('snowflake.lease.state', { 'snowflake.lease.state': 'held' })).toBe(0);
    expect(fenced.value('snowflake.lease.fence.headroom')).toBe(0);
    expect(fenced.value('snowflake.ready')).toBe(0);
    // The fence counts from when the last good renewal was sent, the age from when its answer came back: at the
    // fence the age is the headroom less that round trip (well under 100 ms on loopback).
    expect(fenced.value('snowflake.lease.renewal.age')).toBeGreaterThanOrEqual(MAX_HEADROOM_S - 0.1);
  });

  it('records the loss found when an empty Redis returns, and the switch to a re-claimed worker ID', async () => {
    // An empty Redis on the same port: the holder finds its lease gone, waits for the namespace to settle, re-claims.
    await redis.restart();
    const back = await collectUntil(
      collect,
      (c) => c.value('snowflake.lease.state', { 'snowflake.lease.state': 'held' }) === 1,
      SETTLE_AFTER_LOSS_MS + 4 * TTL_MS + 5000,
      'the lease to be held again',
    );
    expect(back.value('snowflake.worker.switches')).toBeGreaterThanOrEqual(1);
    expect(back.value('snowflake.ready')).toBe(1);
    const losses = back
      .points('snowflake.lease.renewal.failures')
      .filter((p) => p.attributes['snowflake.lease.renewal.outcome'] === 'lost');
    expect(losses).toEqual([
      {
        attributes: {
          'snowflake.generator': 'default',
          'snowflake.lease.renewal.outcome': 'lost',
          'error.type': expect.stringMatching(/^(marker|missing)$/),
        },
        value: 1,
      },
    ]);
  });
});
