import { SnowflakeConfigError } from '../core/errors.js';
import { DEFAULTS } from '../core/defaults.js';
import type { Layout } from '../core/layout.js';
import { booleanOption, nonNegativeOption, positiveOption, rejectUnknownKeys } from '../core/option-checks.js';
import { MAX_CLOCK_OFFSET_MS, MAX_TTL_MS, clockReserveMs, contractOf } from './lease.contract.js';
import { lowCapacityAtFree } from './lease.math.js';
import type { RedisClientLike, RedisLeaseOptions } from './lease.options.js';

/** Lease options after validation, with every default filled in. @internal */
export interface LeaseSettings {
  url: string | undefined;
  client: RedisClientLike | undefined;
  namespace: string;
  ttlMs: number;
  renewIntervalMs: number;
  fenceMarginMs: number;
  maxFloorWaitMs: number;
  /** How long a bootstrap claim of a full namespace waits for an ID to become free. */
  waitForFreeWorkerIdMs: number;
  /** `lowCapacityWarning` as a count of free IDs: the namespace is low at this many or fewer. */
  lowCapacityAtFree: number;
  connectTimeoutMs: number;
  bootstrapAttempts: number;
  retryBackoffMs: number;
  allocateDatacenter: boolean;
  waitForReplicas: number;
  waitForReplicasTimeoutMs: number;
  /**
   * The most the holder's wall clock may differ from the Redis server's (measured offset plus half the round trip)
   * while it issues IDs. Derived so that `fenceMarginMs >= clockBackToleranceMs + 2 * maxClockOffsetMs + unit`: the
   * argument is in the README's guarantees.
   */
  maxClockOffsetMs: number;
  /** The generator's clock-back tolerance, which the lease's arithmetic must cover. */
  clockBackToleranceMs: number;
  /** With an ioredis Sentinel client: confirm the master with a majority of the Sentinels at each renewal. */
  confirmWithSentinels: boolean;
  /** With an ioredis Cluster client: confirm each claim's primary with a majority of the cluster's primaries. */
  confirmWithCluster: boolean;
  /** How many IDs the lease hands out: worker IDs, or datacenter and worker IDs together. */
  idCount: number;
  /**
   * What every holder of the namespace must share, recorded in Redis: the layout (a reused ID's floor only covers
   * IDs of the same layout) and every number of the safety argument (TTL, fence margin, clock-back tolerance, clock
   * bound). See lease.contract.ts.
   */
  config: string;
}

/** Every option of {@link RedisLeaseOptions}. */
const LEASE_OPTION_KEYS: readonly string[] = Object.keys({
  url: 0,
  client: 0,
  namespace: 0,
  ttlMs: 0,
  renewIntervalMs: 0,
  fenceMarginMs: 0,
  maxFloorWaitMs: 0,
  waitForFreeWorkerIdMs: 0,
  lowCapacityWarning: 0,
  connectTimeoutMs: 0,
  bootstrapAttempts: 0,
  retryBackoffMs: 0,
  allocateDatacenter: 0,
  waitForReplicas: 0,
  waitForReplicasTimeoutMs: 0,
  maxClockOffsetMs: 0,
  confirmWithSentinels: 0,
  confirmWithCluster: 0,
} satisfies Record<keyof RedisLeaseOptions, 0>);

const NAMESPACE = /^[A-Za-z0-9_.:-]{1,100}$/;
/** How a fixed datacenter ID ends the keys' hash tag: `<namespace>:dc<id>`. */
const FIXED_DATACENTER_TAG = /:dc\d+$/;

/**
 * Validates lease options at bootstrap, with the module's `clockBackToleranceMs` (given or not): with a lease its
 * default is the lower of 1000 ms and half the fence margin, so that a short TTL still leaves room for the clock
 * check. @internal
 */
export function resolveLeaseSettings(
  options: RedisLeaseOptions,
  layout: Layout,
  givenClockBackToleranceMs?: unknown,
): LeaseSettings {
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('redis', 'expected an object: { url: "redis://…" } or { client: new Redis(…) }.');
  }
  rejectUnknownKeys('redis', options, LEASE_OPTION_KEYS, 'the Redis lease (`redis`)');
  if ((options.url === undefined) === (options.client === undefined)) {
    throw new SnowflakeConfigError(
      'redis',
      'give exactly one of `redis.url` (the module creates and closes the client) or `redis.client` (yours, never closed by the module).',
    );
  }
  if (options.url !== undefined && (typeof options.url !== 'string' || !/^rediss?:\/\//.test(options.url))) {
    throw new SnowflakeConfigError(
      'redis.url',
      `expected a redis:// or rediss:// URL, got ${JSON.stringify(options.url)}.`,
    );
  }
  if (
    options.client !== undefined &&
    (typeof options.client !== 'object' || typeof options.client.call !== 'function')
  ) {
    throw new SnowflakeConfigError('redis.client', 'expected an ioredis Redis or Cluster instance.');
  }
  if (
    (options.waitForReplicas ?? 0) > 0 &&
    (options.client as { isCluster?: unknown } | undefined)?.isCluster === true
  ) {
    // WAIT takes no key, so an ioredis Cluster sends it to any node rather than the primary holding the namespace.
    throw new SnowflakeConfigError(
      'redis.waitForReplicas',
      'WAIT cannot be routed to the primary that holds the namespace through an ioredis Cluster client; leave ' +
        'waitForReplicas at 0 with a Cluster, or use a Redis or Sentinel client.',
    );
  }
  const namespace = options.namespace ?? 'default';
  if (typeof namespace !== 'string' || !NAMESPACE.test(namespace)) {
    throw new SnowflakeConfigError(
      'redis.namespace',
      `expected 1 to 100 characters of letters, digits and _ . : -, got ${JSON.stringify(namespace)}.`,
    );
  }
  const ttlMs = positiveOption('redis.ttlMs', options.ttlMs, 10_000);
  if (ttlMs < 1000) throw new SnowflakeConfigError('redis.ttlMs', `must be at least 1000 ms, got ${ttlMs}.`);
  if (ttlMs > MAX_TTL_MS) {
    throw new SnowflakeConfigError(
      'redis.ttlMs',
      `must be at most ${MAX_TTL_MS} ms, got ${ttlMs}: after a Redis data loss a namespace settles for a fixed ` +
        "time that must outlast every holder's lease, whatever each instance is configured with. Use a TTL of " +
        `${MAX_TTL_MS} ms or less (a holder then rides out a Redis outage of up to ttlMs - fenceMarginMs).`,
    );
  }
  const renewIntervalMs = positiveOption('redis.renewIntervalMs', options.renewIntervalMs, Math.floor(ttlMs / 4));
  const fenceMarginMs = positiveOption('redis.fenceMarginMs', options.fenceMarginMs, Math.floor(ttlMs / 5));
  if (renewIntervalMs + fenceMarginMs >= ttlMs) {
    throw new SnowflakeConfigError(
      'redis.renewIntervalMs',
      `renewIntervalMs (${renewIntervalMs}) plus fenceMarginMs (${fenceMarginMs}) must stay below ttlMs (${ttlMs}), ` +
        'or the holder would fence itself between two healthy renewals. Renew more often (ttlMs / 4 is the default).',
    );
  }
  const { clockBackToleranceMs, maxClockOffsetMs } = resolveClockBounds(
    options,
    layout,
    ttlMs,
    fenceMarginMs,
    givenClockBackToleranceMs,
  );
  const allocateDatacenter = options.allocateDatacenter === true;
  if (allocateDatacenter && FIXED_DATACENTER_TAG.test(namespace)) {
    // With a fixed datacenter the keys' hash tag is `<namespace>:dc<id>` (lease.keys.ts): this namespace would name
    // another namespace's keys of that datacenter, and read its worker IDs as datacenter and worker bits together.
    throw new SnowflakeConfigError(
      'redis.namespace',
      `must not end in ":dc" and a number with allocateDatacenter, got ${JSON.stringify(namespace)}: the keys of ` +
        `namespace ${JSON.stringify(namespace.replace(FIXED_DATACENTER_TAG, ''))} with a fixed datacenter ID are ` +
        'named so, and both would hand out the same worker IDs; choose another name (for example with "-dc").',
    );
  }
  const idBits = layout.workerBits + (allocateDatacenter ? layout.datacenterBits : 0);
  if (idBits === 0) {
    throw new SnowflakeConfigError(
      'layout.workerBits',
      'the layout has no worker bits for the lease to hand out; give it some.',
    );
  }
  if (idBits > 24) {
    throw new SnowflakeConfigError(
      'layout.workerBits',
      `the lease hands out at most 2^24 IDs; the layout asks for ${idBits} bits.`,
    );
  }
  const idCount = 2 ** idBits;
  return {
    url: options.url,
    client: options.client,
    namespace,
    ttlMs,
    renewIntervalMs,
    fenceMarginMs,
    maxFloorWaitMs: nonNegativeOption('redis.maxFloorWaitMs', options.maxFloorWaitMs, 2000),
    waitForFreeWorkerIdMs: nonNegativeOption('redis.waitForFreeWorkerIdMs', options.waitForFreeWorkerIdMs, 2 * ttlMs),
    lowCapacityAtFree: lowCapacityAtFree(lowCapacityWarningOption(options.lowCapacityWarning, idCount), idCount),
    connectTimeoutMs: positiveOption('redis.connectTimeoutMs', options.connectTimeoutMs, 2000),
    bootstrapAttempts: positiveOption('redis.bootstrapAttempts', options.bootstrapAttempts, 5),
    retryBackoffMs: positiveOption('redis.retryBackoffMs', options.retryBackoffMs, 200),
    allocateDatacenter,
    waitForReplicas: nonNegativeOption('redis.waitForReplicas', options.waitForReplicas, 0),
    waitForReplicasTimeoutMs: positiveOption('redis.waitForReplicasTimeoutMs', options.waitForReplicasTimeoutMs, 500),
    maxClockOffsetMs,
    clockBackToleranceMs,
    confirmWithSentinels: booleanOption('redis.confirmWithSentinels', options.confirmWithSentinels, true),
    confirmWithCluster: booleanOption('redis.confirmWithCluster', options.confirmWithCluster, true),
    idCount,
    config: contractOf({ ttlMs, fenceMarginMs, clockBackToleranceMs, maxClockOffsetMs }, layout),
  };
}

/**
 * `redis.lowCapacityWarning`: a fraction of the namespace (strictly between 0 and 1) or a whole count of free IDs
 * below the namespace's size. A count of 1.5 IDs means neither, so it is refused rather than rounded.
 */
function lowCapacityWarningOption(value: unknown, idCount: number): number {
  if (value === undefined) return 0.1;
  const fraction = typeof value === 'number' && value > 0 && value < 1;
  const count = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value < idCount;
  if (!fraction && !count) {
    throw new SnowflakeConfigError(
      'redis.lowCapacityWarning',
      `expected a fraction of the namespace between 0 and 1 (0.1 warns at 10 % free) or a whole number of free ` +
        `worker IDs from 0 to ${idCount - 1}, got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}

/**
 * The clock bounds of a lease and the check that they fit together. After a data loss, a holder from before it
 * had its last timestamp allowed before its fence (the generator asks the permit once per time unit, so further IDs
 * of that unit may follow, but never a later timestamp), at least `fenceMarginMs` before settling ends, with a timestamp at most
 * `maxClockOffsetMs + clockBackToleranceMs` ahead of the Redis server's clock; the next holder issues at least
 * `maxClockOffsetMs` (and one time unit) behind it. The margin must cover both, and a reserve for `TIME`'s rounding
 * and the drift of the monotonic clock over one TTL (lease.contract.ts).
 */
function resolveClockBounds(
  options: RedisLeaseOptions,
  layout: Layout,
  ttlMs: number,
  fenceMarginMs: number,
  givenClockBackToleranceMs: unknown,
): { clockBackToleranceMs: number; maxClockOffsetMs: number } {
  const clockBackToleranceMs = nonNegativeOption(
    'clockBackToleranceMs',
    givenClockBackToleranceMs,
    Math.min(DEFAULTS.clockBackToleranceMs, Math.floor(fenceMarginMs / 2)),
  );
  const reserveMs = clockReserveMs(ttlMs);
  const room = fenceMarginMs - clockBackToleranceMs - layout.timeUnitMs - reserveMs;
  const maxClockOffsetMs = positiveOption(
    'redis.maxClockOffsetMs',
    options.maxClockOffsetMs,
    Math.min(MAX_CLOCK_OFFSET_MS, Math.floor(room / 2)),
  );
  if (maxClockOffsetMs > MAX_CLOCK_OFFSET_MS) {
    throw new SnowflakeConfigError(
      'redis.maxClockOffsetMs',
      `must be at most ${MAX_CLOCK_OFFSET_MS} ms, got ${maxClockOffsetMs}: settling after a data loss covers clocks ` +
        "that agree with the Redis server's within that. Synchronise the clocks (NTP) instead.",
    );
  }
  if (maxClockOffsetMs < 1 || 2 * maxClockOffsetMs > room) {
    throw new SnowflakeConfigError(
      'redis.fenceMarginMs',
      `fenceMarginMs (${fenceMarginMs}) must be at least clockBackToleranceMs (${clockBackToleranceMs}) + 2 × ` +
        `redis.maxClockOffsetMs (${options.maxClockOffsetMs ?? 'derived'}) + the time unit (${layout.timeUnitMs} ms) ` +
        `+ a reserve of ${reserveMs} ms (TIME's rounding and clock drift over one TTL), or IDs issued before a Redis ` +
        'data loss could repeat after it. Raise redis.fenceMarginMs (or redis.ttlMs), lower clockBackToleranceMs, ' +
        'or lower redis.maxClockOffsetMs.',
    );
  }
  return { clockBackToleranceMs, maxClockOffsetMs };
}
