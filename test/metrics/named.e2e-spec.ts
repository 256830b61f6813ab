/**
 * SnowflakeMetricsModule in an app with two registrations: a static worker ID (the default one) and a Redis lease on a
 * real redis-server (`orders`). Both are published on the same instruments, each point carrying its registration's
 * name as `snowflake.generator`; the lease's gauges and renewal histogram come from the registration that has one.
 */
import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeMetricsModule } from '../../lib/metrics.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { getIdServiceToken } from '../../lib/module/snowflake.names.js';
import { testMeterProvider, type Collected } from '../support/metric-reader.js';
import { settledSharedNamespace } from '../support/shared-redis.js';
import { sleep } from '../support/time.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const GENERATOR = 'snowflake.generator';

describe('SnowflakeMetricsModule with two registrations', () => {
  let moduleRef: TestingModule;
  let ids: IdService;
  let orderIds: IdService;
  const { provider, collect } = testMeterProvider();

  beforeAll(async () => {
    const { url, namespace } = await settledSharedNamespace('metrics-named');
    moduleRef = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({ workerId: 3 }),
        SnowflakeModule.forRoot({
          name: 'orders',
          redis: { url, namespace, ttlMs: 1500, connectTimeoutMs: 300 },
        }),
        SnowflakeMetricsModule.forRoot({ meterProvider: provider }),
      ],
    })
      .setLogger(quiet)
      .compile();
    await moduleRef.init();
    ids = moduleRef.get(IdService);
    orderIds = moduleRef.get<IdService>(getIdServiceToken('orders'));
  });

  afterAll(async () => {
    await moduleRef?.close();
  });

  it('counts the IDs of each registration on its own series', async () => {
    ids.nextBatch(3);
    orderIds.nextBatch(5);
    const collected = await collect();
    expect(collected.points('snowflake.ids.issued')).toEqual(
      expect.arrayContaining([
        { attributes: { [GENERATOR]: 'default' }, value: 3 },
        { attributes: { [GENERATOR]: 'orders' }, value: 5 },
      ]),
    );
    expect(collected.points('snowflake.ids.issued')).toHaveLength(2);
    expect(collected.value('snowflake.ready', { [GENERATOR]: 'default' })).toBe(1);
    expect(collected.value('snowflake.ready', { [GENERATOR]: 'orders' })).toBe(1);
  });

  it("reports the lease's gauges and renewals for the registration that holds one only", async () => {
    let collected: Collected;
    const deadline = Date.now() + 10_000;
    for (;;) {
      collected = await collect();
      if ((collected.histogram('snowflake.lease.renewal.duration')?.count ?? 0) > 0) break;
      if (Date.now() > deadline) throw new Error('no lease renewal recorded within 10 s');
      await sleep(50);
    }
    const states = collected.points('snowflake.lease.state');
    expect(states.length).toBeGreaterThan(0);
    expect(states.every((point) => point.attributes[GENERATOR] === 'orders')).toBe(true);
    expect(collected.value('snowflake.lease.state', { [GENERATOR]: 'orders', 'snowflake.lease.state': 'held' })).toBe(
      1,
    );
    expect(collected.points('snowflake.lease.fence.headroom').map((point) => point.attributes)).toEqual([
      { [GENERATOR]: 'orders' },
    ]);
    const renewals = collected.points('snowflake.lease.renewal.duration');
    expect(renewals.length).toBeGreaterThan(0);
    expect(renewals.every((point) => point.attributes[GENERATOR] === 'orders')).toBe(true);
  });
});
