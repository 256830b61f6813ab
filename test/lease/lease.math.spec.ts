import { resolveLayout } from '../../lib/core/layout.js';
import { capacityOf, freeWaitMs, lowCapacityAtFree } from '../../lib/lease/lease.math.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';
import { SnowflakeConfigError } from '../../lib/core/errors.js';

describe('lease capacity arithmetic', () => {
  it('reads lowCapacityWarning as a fraction of the namespace (rounded up) or as a count of free IDs', () => {
    expect(lowCapacityAtFree(0.1, 32)).toBe(4);
    expect(lowCapacityAtFree(0.1, 4)).toBe(1);
    expect(lowCapacityAtFree(0.5, 4)).toBe(2);
    expect(lowCapacityAtFree(0, 4)).toBe(0);
    expect(lowCapacityAtFree(1, 1024)).toBe(1);
    expect(lowCapacityAtFree(10, 1024)).toBe(10);
  });

  it('counts free IDs from the live leases and marks the namespace low at or below the threshold', () => {
    expect(capacityOf(4, 1, 1, 123)).toEqual({ size: 4, held: 1, free: 3, low: false, checkedAt: 123 });
    expect(capacityOf(4, 3, 1, 5)).toEqual({ size: 4, held: 3, free: 1, low: true, checkedAt: 5 });
    expect(capacityOf(4, 4, 0, 5)).toMatchObject({ free: 0, low: true });
    expect(capacityOf(4, 3, 0, 5)).toMatchObject({ free: 1, low: false });
    // Never more held than the namespace has, whatever a reply says.
    expect(capacityOf(4, 9, 0, 5)).toMatchObject({ held: 4, free: 0 });
  });

  it('waits for the soonest expiry, polling at least every pollMs and never past the bound', () => {
    const bounds = { minMs: 50, pollMs: 250 };
    // The soonest lease lapses in 100 ms: ask again just after it.
    expect(freeWaitMs(10_100, 10_000, 5000, bounds)).toBe(105);
    // It lapses in 3 s: ask again within a renew interval, since a graceful stop frees its ID before that.
    expect(freeWaitMs(13_000, 10_000, 5000, bounds)).toBe(250);
    // Already lapsed (renewed late, or just released): not a tight loop.
    expect(freeWaitMs(9_990, 10_000, 5000, bounds)).toBe(50);
    // No live lease known (the IDs were passed over): poll.
    expect(freeWaitMs(-1, 10_000, 5000, bounds)).toBe(250);
    // Never beyond what is left of the bound.
    expect(freeWaitMs(10_100, 10_000, 30, bounds)).toBe(30);
    expect(freeWaitMs(10_100, 10_000, 0, bounds)).toBe(0);
  });
});

describe('capacity options', () => {
  const layout = resolveLayout({ workerBits: 2 });
  const resolve = (redis: Record<string, unknown>) =>
    resolveLeaseSettings({ url: 'redis://127.0.0.1:1', ttlMs: 3000, ...redis }, layout);

  it('defaults to waiting two TTLs for a free ID and to warning at 10 % free', () => {
    const settings = resolve({});
    expect(settings.waitForFreeWorkerIdMs).toBe(6000);
    expect(settings.lowCapacityAtFree).toBe(1);
    expect(resolve({ waitForFreeWorkerIdMs: 0, lowCapacityWarning: 2 })).toMatchObject({
      waitForFreeWorkerIdMs: 0,
      lowCapacityAtFree: 2,
    });
    expect(resolve({ lowCapacityWarning: 0.5 }).lowCapacityAtFree).toBe(2);
  });

  it.each([
    ['redis.waitForFreeWorkerIdMs', { waitForFreeWorkerIdMs: -1 }],
    ['redis.waitForFreeWorkerIdMs', { waitForFreeWorkerIdMs: '5s' }],
    ['redis.lowCapacityWarning', { lowCapacityWarning: 1.5 }],
    ['redis.lowCapacityWarning', { lowCapacityWarning: -0.1 }],
    ['redis.lowCapacityWarning', { lowCapacityWarning: 4 }],
    ['redis.lowCapacityWarning', { lowCapacityWarning: '10%' }],
    // The keys of namespace "orders" with datacenter ID 1 are `snowflake:{orders:dc1}:…`: the same as these.
    ['redis.namespace', { namespace: 'orders:dc1', allocateDatacenter: true }],
    // A string from the environment is not read as the boolean it spells.
    ['redis.confirmWithCluster', { confirmWithCluster: 'false' }],
    ['redis.confirmWithSentinels', { confirmWithSentinels: 0 }],
  ])('refuses a bad %s at bootstrap, naming it', (option, redis) => {
    let error: unknown;
    try {
      resolve(redis);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as Error).message).toContain(option);
  });

  it('confirms claims with the Sentinels and with a Cluster’s primaries unless told not to', () => {
    expect(resolve({})).toMatchObject({ confirmWithSentinels: true, confirmWithCluster: true });
    expect(resolve({ confirmWithCluster: false, confirmWithSentinels: false })).toMatchObject({
      confirmWithSentinels: false,
      confirmWithCluster: false,
    });
  });

  it('keeps the keys of an allocating namespace apart from those of a fixed datacenter', () => {
    const keysOf = (redis: Record<string, unknown>, datacenterId: number) => leaseKeys(resolve(redis), datacenterId);
    expect(keysOf({ namespace: 'orders' }, 1).meta).toBe('snowflake:{orders:dc1}:meta');
    expect(keysOf({ namespace: 'orders-dc1', allocateDatacenter: true }, 0).meta).toBe('snowflake:{orders-dc1}:meta');
    expect(keysOf({ namespace: 'orders:dc', allocateDatacenter: true }, 0).meta).toBe('snowflake:{orders:dc}:meta');
    expect(() => resolve({ namespace: 'a:dc1:dc2', allocateDatacenter: true })).toThrow(/"a:dc1"/);
    // Without allocation the name is free: the datacenter's suffix follows it.
    expect(keysOf({ namespace: 'orders:dc1' }, 2).meta).toBe('snowflake:{orders:dc1:dc2}:meta');
  });
});
