import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SnowflakeHealthIndicator, SnowflakeHealthModule } from '../../lib/health.js';
import { IdService, SnowflakeModule, type LeaseStatus, type SnowflakeStatus } from '../../lib/index.js';
import { FakeClock } from '../support/fake-clock.js';
import { getHealth, HealthModule } from './health.fixture.js';

describe('SnowflakeHealthIndicator with a static worker ID', () => {
  let app: INestApplication;
  let ids: IdService;
  const clock = new FakeClock(Date.now());

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      // SnowflakeModule is not global: the indicator must find IdService across modules by itself.
      imports: [SnowflakeModule.forRoot({ workerId: 7, layout: 'twitter', datacenterId: 3, clock }), HealthModule],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    ids = app.get(IdService);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('reports up with the worker and the counters through GET /health', async () => {
    ids.next();
    ids.next();
    const { status, body } = await getHealth(app);
    expect(status).toBe(200);
    expect(body.status).toBe('ok');
    expect(body.info?.snowflake).toEqual({
      status: 'up',
      source: 'static',
      workerId: 7,
      datacenterId: 3,
      issued: 2,
      overflowWaits: 0,
      clockBackEvents: 0,
      clockBehindMs: 0,
    });
  });

  it('reports down (503) while the clock stands behind the last issued timestamp, and up once it catches up', async () => {
    ids.next();
    clock.back(250);
    const down = await getHealth(app);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('error');
    expect(down.body.error?.snowflake).toMatchObject({ status: 'down', reason: 'clock-behind', clockBehindMs: 250 });
    expect(down.body.error?.snowflake?.message).toContain('250 ms behind');

    clock.advance(251);
    const up = await getHealth(app);
    expect(up.status).toBe(200);
    expect(up.body.info?.snowflake).toMatchObject({ status: 'up', clockBehindMs: 0 });
  });

  it('tolerates a configured step back', () => {
    ids.next();
    clock.back(5);
    const indicator = app.get(SnowflakeHealthIndicator);
    expect(indicator.isHealthy('snowflake').snowflake.status).toBe('down');
    expect(indicator.isHealthy('snowflake', { maxClockBehindMs: 5 }).snowflake.status).toBe('up');
    clock.advance(6);
  });

  it('reports under the key it is given', () => {
    const result = app.get(SnowflakeHealthIndicator).isHealthy('ids');
    expect(Object.keys(result)).toEqual(['ids']);
    expect(result.ids.status).toBe('up');
  });

  it('reports down once the worker ID is released at shutdown', async () => {
    const indicator = app.get(SnowflakeHealthIndicator);
    await ids.onApplicationShutdown();
    const result = indicator.isHealthy();
    expect(Object.keys(result)).toEqual(['snowflake']);
    expect(result.snowflake).toMatchObject({ status: 'down', reason: 'no-worker-id', workerId: null });
  });
});

describe('SnowflakeHealthIndicator without SnowflakeModule', () => {
  it('reports down with the fix instead of throwing', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SnowflakeHealthModule] }).compile();
    const result = moduleRef.get(SnowflakeHealthIndicator).isHealthy();
    expect(result.snowflake).toMatchObject({ status: 'down', reason: 'not-configured' });
    expect(result.snowflake.message).toContain('SnowflakeModule.forRoot');
    await moduleRef.close();
  });
});

/**
 * The thresholds against lease states given by hand. That Redis produces these states is shown against a real
 * redis-server in snowflake-lease.health.e2e-spec.ts.
 */
describe('SnowflakeHealthIndicator thresholds on lease states', () => {
  let indicator: SnowflakeHealthIndicator;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SnowflakeHealthModule] }).compile();
    indicator = moduleRef.get(SnowflakeHealthIndicator);
  });

  const now = Date.now();
  const heldLease: LeaseStatus = {
    state: 'held',
    namespace: 'orders',
    workerId: 12,
    datacenterId: 1,
    expiresAt: now + 8000,
    fenceInMs: 6000,
    lowestFenceInMs: 5500,
    lastRenewalAt: now - 500,
    renewalFailures: 0,
    clockOffsetMs: 3,
    clockErrorMs: 1,
    maxClockOffsetMs: 499,
    clockInSync: true,
    settlingInMs: null,
    ceilingMs: now + 9000,
    floorMs: null,
    switches: 0,
    lastError: null,
    capacity: { size: 16, held: 3, free: 13, low: false, checkedAt: now - 500 },
    lowCapacityAtFree: 2,
  };

  function serviceWith(lease: Partial<LeaseStatus>, status: Partial<SnowflakeStatus> = {}): IdService {
    const full: SnowflakeStatus = {
      source: 'redis',
      ready: true,
      workerId: 12,
      datacenterId: 1,
      lastTimestampMs: now - 10,
      clockBehindMs: 0,
      nowMs: now,
      issued: 42,
      overflowWaits: 1,
      clockBackEvents: 0,
      maxClockBackMs: 0,
      lastTimestamp: 1000,
      ...status,
      lease: { ...heldLease, ...lease },
    };
    return { status: () => full } as IdService;
  }

  it('is up with the lease details while the lease is held with margin to spare', () => {
    const result = indicator.isHealthy('snowflake', { idService: serviceWith({}) });
    expect(result.snowflake).toMatchObject({
      status: 'up',
      source: 'redis',
      workerId: 12,
      datacenterId: 1,
      namespace: 'orders',
      leaseState: 'held',
      fenceInMs: 6000,
      lastRenewalAt: new Date(now - 500).toISOString(),
      renewalFailures: 0,
      clockOffsetMs: 3,
      issued: 42,
      overflowWaits: 1,
    });
    expect(result.snowflake.leaseExpiresInMs).toBe(8000);
  });

  it("measures the lease expiry against the module's clock, not Date.now()", () => {
    // An injected clock an hour ahead of the system clock: expiresAt and nowMs are both read from it.
    const skewedNow = Date.now() + 3_600_000;
    const service = serviceWith({ expiresAt: skewedNow + 8000 }, { nowMs: skewedNow });
    expect(indicator.isHealthy('s', { idService: service }).s.leaseExpiresInMs).toBe(8000);
  });

  it.each(['idle', 'claiming', 'fenced', 'lost', 'switching', 'released'] as const)(
    'is down while the lease is %s',
    (state) => {
      const result = indicator.isHealthy('snowflake', {
        idService: serviceWith({ state, lastError: 'connect ECONNREFUSED' }, { ready: false }),
      });
      expect(result.snowflake).toMatchObject({ status: 'down', reason: 'lease-not-held', leaseState: state });
      expect(result.snowflake.message).toContain(`is ${state}`);
      expect(result.snowflake.message).toContain('ECONNREFUSED');
    },
  );

  it('is down when no worker ID is held even though the lease says held', () => {
    const result = indicator.isHealthy('snowflake', { idService: serviceWith({}, { ready: false, workerId: null }) });
    expect(result.snowflake).toMatchObject({ status: 'down', reason: 'no-worker-id' });
  });

  it('is down once the lease has lapsed, and when it lapses within minFenceInMs (half the lowest healthy fence by default)', () => {
    expect(indicator.isHealthy('s', { idService: serviceWith({ fenceInMs: 0 }) }).s).toMatchObject({
      status: 'down',
      reason: 'lease-lapsing',
    });
    expect(indicator.isHealthy('s', { idService: serviceWith({ fenceInMs: 2800 }) }).s.status).toBe('up');
    const soon = serviceWith({ fenceInMs: 2400 });
    const byDefault = indicator.isHealthy('s', { idService: soon });
    expect(byDefault.s).toMatchObject({ status: 'down', reason: 'lease-lapsing' });
    expect(byDefault.s.message).toContain('2400 ms');
    expect(indicator.isHealthy('s', { idService: soon, minFenceInMs: 2000 }).s.status).toBe('up');
    expect(indicator.isHealthy('s', { idService: soon, minFenceInMs: 3000 }).s.status).toBe('down');
  });

  it('stays up through failed renewals the lease rides out, and is down once they bring the fence near', () => {
    const blip = serviceWith({ renewalFailures: 3, lastError: 'timeout', fenceInMs: 6000 });
    const riding = indicator.isHealthy('s', { idService: blip });
    expect(riding.s).toMatchObject({ status: 'up', renewalFailures: 3 });
    const near = serviceWith({ renewalFailures: 2, lastError: 'timeout', fenceInMs: 2400 });
    const result = indicator.isHealthy('s', { idService: near });
    expect(result.s).toMatchObject({ status: 'down', reason: 'renewals-failing', renewalFailures: 2 });
    expect(result.s.message).toContain('fences itself in 2400 ms');
    expect(result.s.message).toContain('timeout');
    const once = serviceWith({ renewalFailures: 1, lastError: 'timeout', fenceInMs: 2400 });
    expect(indicator.isHealthy('s', { idService: once }).s).toMatchObject({ status: 'down', reason: 'lease-lapsing' });
  });

  it('stays up while the namespace runs low on free worker IDs, and shows the counts and the threshold', () => {
    const capacity = { size: 16, held: 15, free: 1, low: true, checkedAt: now - 200 };
    const result = indicator.isHealthy('s', { idService: serviceWith({ capacity }) });
    expect(result.s).toMatchObject({
      status: 'up',
      capacity: { size: 16, held: 15, free: 1, low: true, checkedAt: new Date(now - 200).toISOString() },
      lowCapacityAtFree: 2,
    });
    expect(indicator.isHealthy('s', { idService: serviceWith({ capacity: null }) }).s).toMatchObject({
      status: 'up',
      capacity: null,
    });
  });

  it('is down while the clock stands behind the previous holder’s ceiling', () => {
    const result = indicator.isHealthy('s', { idService: serviceWith({ floorMs: now + 700 }, { clockBehindMs: 700 }) });
    expect(result.s).toMatchObject({ status: 'down', reason: 'clock-behind', clockBehindMs: 700 });
  });
});
