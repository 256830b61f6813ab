/**
 * SnowflakeMetricsModule with a static worker ID, a fake clock and the OpenTelemetry SDK's meter provider, collected
 * on demand: the observable instruments follow `IdService.status()` as IDs are issued, the sequence overflows and
 * the clock steps back; options fail at bootstrap; shutdown removes the callbacks.
 */
import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { metrics } from '@opentelemetry/api';
import { SnowflakeConfigError } from '../../lib/core/errors.js';
import type { LeaseCapacity, LeaseStatus } from '../../lib/lease/lease.status.js';
import { SnowflakeMetricsModule } from '../../lib/metrics.js';
import type { SnowflakeMetricsOptions } from '../../lib/metrics/metrics.options.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { FakeClock } from '../support/fake-clock.js';
import { testMeterProvider } from '../support/metric-reader.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const START = Date.UTC(2026, 10, 24, 12);

async function boot(
  snowflake: SnowflakeModuleOptions,
  metricsOptions: SnowflakeMetricsOptions,
): Promise<{ moduleRef: TestingModule; ids: IdService }> {
  const moduleRef = await Test.createTestingModule({
    imports: [SnowflakeModule.forRoot(snowflake), SnowflakeMetricsModule.forRoot(metricsOptions)],
  })
    .setLogger(quiet)
    .compile();
  await moduleRef.init();
  return { moduleRef, ids: moduleRef.get(IdService) };
}

describe('SnowflakeMetricsModule with a static worker ID', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('counts IDs issued, read at collection time', async () => {
    const { provider, collect } = testMeterProvider();
    const clock = new FakeClock(START);
    const booted = await boot({ workerId: 3, clock }, { meterProvider: provider });
    moduleRef = booted.moduleRef;

    const before = await collect();
    expect(before.value('snowflake.ids.issued')).toBe(0);
    expect(before.value('snowflake.ready')).toBe(1);
    expect(before.metric('snowflake.ids.issued')?.descriptor).toMatchObject({ unit: '{id}' });

    booted.ids.next();
    booted.ids.nextBatch(41);
    clock.advance(5);
    await booted.ids.nextAsync();
    const after = await collect();
    expect(after.value('snowflake.ids.issued')).toBe(43);
    expect(after.value('snowflake.sequence.overflow_waits')).toBe(0);
    expect(after.value('snowflake.clock.back_events')).toBe(0);
  });

  it('counts overflow waits when a time unit runs out of sequence numbers', async () => {
    const { provider, collect } = testMeterProvider();
    const clock = new FakeClock(START);
    const booted = await boot({ workerId: 3, clock, maxSyncWaitMs: 5_000 }, { meterProvider: provider });
    moduleRef = booted.moduleRef;

    // The default layout has 12 sequence bits: 4096 IDs fill the time unit, the next one waits for the clock, which
    // moves on only after more reads.
    booted.ids.nextBatch(4096);
    expect((await collect()).value('snowflake.sequence.overflow_waits')).toBe(0);
    clock.autoAdvance(1, 20);
    booted.ids.next();
    const collected = await collect();
    expect(collected.value('snowflake.sequence.overflow_waits')).toBe(1);
    expect(collected.value('snowflake.ids.issued')).toBe(4097);
  });

  it('counts clock-back events when the clock steps back within the tolerance', async () => {
    const { provider, collect } = testMeterProvider();
    const clock = new FakeClock(START);
    const booted = await boot({ workerId: 3, clock }, { meterProvider: provider });
    moduleRef = booted.moduleRef;

    booted.ids.next();
    clock.back(200);
    booted.ids.next();
    booted.ids.next();
    expect((await collect()).value('snowflake.clock.back_events')).toBe(1);
    // Caught up, then back again: a second event.
    clock.advance(400);
    booted.ids.next();
    clock.back(300);
    booted.ids.next();
    expect((await collect()).value('snowflake.clock.back_events')).toBe(2);
  });

  it('publishes no lease instruments without a lease', async () => {
    const { provider, collect } = testMeterProvider();
    const booted = await boot({ workerId: 3 }, { meterProvider: provider });
    moduleRef = booted.moduleRef;
    booted.ids.next();
    expect((await collect()).names()).toEqual([
      'snowflake.clock.back_events',
      'snowflake.ids.issued',
      'snowflake.ready',
      'snowflake.sequence.overflow_waits',
    ]);
  });

  it('names instruments with the given prefix', async () => {
    const { provider, collect } = testMeterProvider();
    const booted = await boot({ workerId: 3 }, { meterProvider: provider, prefix: 'orders.ids_gen' });
    moduleRef = booted.moduleRef;
    booted.ids.next();
    const collected = await collect();
    expect(collected.value('orders.ids_gen.ids.issued')).toBe(1);
    expect(collected.names().every((name) => name.startsWith('orders.ids_gen.'))).toBe(true);
  });

  it('uses the global meter provider of @opentelemetry/api when none is given', async () => {
    const { provider, collect } = testMeterProvider();
    expect(metrics.setGlobalMeterProvider(provider)).toBe(true);
    try {
      const booted = await boot({ workerId: 3 }, {});
      moduleRef = booted.moduleRef;
      booted.ids.next();
      booted.ids.next();
      expect((await collect()).value('snowflake.ids.issued')).toBe(2);
    } finally {
      metrics.disable();
    }
  });

  it('removes its callbacks on shutdown: a later collection reads nothing from the closed app', async () => {
    // Delta: a series appears in a collection only when a callback observed it since the previous one.
    const { provider, collect } = testMeterProvider('delta');
    const booted = await boot({ workerId: 3 }, { meterProvider: provider });
    booted.ids.next();
    expect((await collect()).value('snowflake.ids.issued')).toBe(1);
    expect((await collect()).names()).toContain('snowflake.ready');
    await booted.moduleRef.close();
    // The closed service would still answer status(): only removed callbacks leave the collection empty.
    expect(booted.ids.status().issued).toBe(1);
    expect((await collect()).names()).toEqual([]);
  });

  it('fails at bootstrap on an unknown option, a bad prefix or a meterProvider that is not one', async () => {
    await expect(boot({ workerId: 3 }, { prefx: 'x' } as SnowflakeMetricsOptions)).rejects.toThrow(
      new SnowflakeConfigError(
        'prefx',
        'SnowflakeMetricsModule has no option "prefx"; did you mean `prefix`? Valid options: meterProvider, prefix.',
      ),
    );
    await expect(boot({ workerId: 3 }, { prefix: '1st' })).rejects.toThrow(/Invalid snowflake option `prefix`/);
    await expect(boot({ workerId: 3 }, { prefix: 'snowflake.' })).rejects.toThrow(/not ending in a dot/);
    await expect(boot({ workerId: 3 }, { meterProvider: {} as never })).rejects.toThrow(
      /Invalid snowflake option `meterProvider`: expected an OpenTelemetry MeterProvider/,
    );
  });

  it('fails at bootstrap without SnowflakeModule, saying what to import', async () => {
    const attempt = Test.createTestingModule({ imports: [SnowflakeMetricsModule.forRoot()] })
      .setLogger(quiet)
      .compile()
      .then((ref) => ref.init());
    await expect(attempt).rejects.toThrow(
      /`SnowflakeMetricsModule`: no IdService .*import SnowflakeModule\.forRoot\(\)/,
    );
  });
});

/**
 * An app's own lease-like source: it reports a lease status, with the `capacity` field a lease fills once it counts
 * the namespace's worker IDs. The gauges of held and free IDs read that field structurally, whoever reports it.
 */
class CountingSource extends StubWorkerSource {
  capacity: LeaseCapacity | null = null;
  state: LeaseStatus['state'] = 'held';

  constructor() {
    super({ kind: 'counting', workerId: 5 });
  }

  leaseStatus(): LeaseStatus {
    const held = this.state === 'held';
    return {
      state: this.state,
      namespace: 'counting',
      workerId: held ? 5 : null,
      datacenterId: held ? 0 : null,
      expiresAt: held ? START + 10_000 : null,
      fenceInMs: held ? 7_500 : null,
      lowestFenceInMs: 5_500,
      lastRenewalAt: START - 1_500,
      renewalFailures: 1,
      clockOffsetMs: -12,
      clockErrorMs: 1,
      maxClockOffsetMs: 499,
      clockInSync: true,
      settlingInMs: null,
      ceilingMs: START + 10_000,
      floorMs: null,
      switches: 2,
      lastError: null,
      capacity: this.capacity,
      lowCapacityAtFree: 1,
    };
  }
}

describe('SnowflakeMetricsModule reading a lease status', () => {
  it('publishes the lease gauges, and held and free worker IDs once the status has a capacity', async () => {
    const { provider, collect } = testMeterProvider();
    const source = new CountingSource();
    const clock = new FakeClock(START);
    const { moduleRef } = await boot({ workerSource: source, clock }, { meterProvider: provider });
    try {
      const first = await collect();
      expect(first.value('snowflake.lease.state', { 'snowflake.lease.state': 'held' })).toBe(1);
      expect(first.value('snowflake.lease.state', { 'snowflake.lease.state': 'fenced' })).toBe(0);
      expect(first.points('snowflake.lease.state')).toHaveLength(8);
      expect(first.value('snowflake.lease.fence.headroom')).toBe(7.5);
      expect(first.value('snowflake.lease.clock.offset')).toBe(-0.012);
      expect(first.value('snowflake.lease.renewal.consecutive_failures')).toBe(1);
      expect(first.value('snowflake.lease.renewal.age')).toBe(1.5);
      expect(first.value('snowflake.worker.switches')).toBe(2);
      // A null capacity (not counted yet) publishes nothing rather than zeros.
      expect(first.value('snowflake.worker_ids.held')).toBeUndefined();
      expect(first.value('snowflake.worker_ids.free')).toBeUndefined();

      source.capacity = { size: 1024, held: 3, free: 1021, low: false, checkedAt: START };
      const second = await collect();
      expect(second.value('snowflake.worker_ids.held')).toBe(3);
      expect(second.value('snowflake.worker_ids.free')).toBe(1021);
      expect(second.metric('snowflake.worker_ids.free')?.descriptor.unit).toBe('{worker_id}');

      // A lost lease has no fence time: the headroom reads 0, not the last value seen while it was held.
      source.state = 'lost';
      const lost = await collect();
      expect(lost.value('snowflake.lease.state', { 'snowflake.lease.state': 'lost' })).toBe(1);
      expect(lost.value('snowflake.lease.state', { 'snowflake.lease.state': 'held' })).toBe(0);
      expect(lost.value('snowflake.lease.fence.headroom')).toBe(0);
    } finally {
      await moduleRef.close();
    }
  });
});
