import { SnowflakeConfigError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import { nonNegativeOption, positiveOption } from '../core/option-checks.js';
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
  connectTimeoutMs: number;
  bootstrapAttempts: number;
  retryBackoffMs: number;
  allocateDatacenter: boolean;
  waitForReplicas: number;
  waitForReplicasTimeoutMs: number;
  /** How many IDs the lease hands out: worker IDs, or datacenter and worker IDs together. */
  idCount: number;
  /**
   * What every holder of the namespace must share, recorded in Redis: the layout (a reused ID's floor only covers
   * IDs of the same layout) and the TTL (settling after a data loss lasts one TTL, which must outlast every
   * holder's fence).
   */
  config: string;
}

const NAMESPACE = /^[A-Za-z0-9_.:-]{1,100}$/;

/** Validates lease options at bootstrap. @internal */
export function resolveLeaseSettings(options: RedisLeaseOptions, layout: Layout): LeaseSettings {
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('redis', 'expected an object: { url: "redis://…" } or { client: new Redis(…) }.');
  }
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
  const renewIntervalMs = positiveOption('redis.renewIntervalMs', options.renewIntervalMs, Math.floor(ttlMs / 4));
  const fenceMarginMs = positiveOption('redis.fenceMarginMs', options.fenceMarginMs, Math.floor(ttlMs / 5));
  if (renewIntervalMs + fenceMarginMs >= ttlMs) {
    throw new SnowflakeConfigError(
      'redis.renewIntervalMs',
      `renewIntervalMs (${renewIntervalMs}) plus fenceMarginMs (${fenceMarginMs}) must stay below ttlMs (${ttlMs}), ` +
        'or the holder would fence itself between two healthy renewals. Renew more often (ttlMs / 4 is the default).',
    );
  }
  const allocateDatacenter = options.allocateDatacenter === true;
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
  return {
    url: options.url,
    client: options.client,
    namespace,
    ttlMs,
    renewIntervalMs,
    fenceMarginMs,
    maxFloorWaitMs: nonNegativeOption('redis.maxFloorWaitMs', options.maxFloorWaitMs, 2000),
    connectTimeoutMs: positiveOption('redis.connectTimeoutMs', options.connectTimeoutMs, 2000),
    bootstrapAttempts: positiveOption('redis.bootstrapAttempts', options.bootstrapAttempts, 5),
    retryBackoffMs: positiveOption('redis.retryBackoffMs', options.retryBackoffMs, 200),
    allocateDatacenter,
    waitForReplicas: nonNegativeOption('redis.waitForReplicas', options.waitForReplicas, 0),
    waitForReplicasTimeoutMs: positiveOption('redis.waitForReplicasTimeoutMs', options.waitForReplicasTimeoutMs, 500),
    idCount: 2 ** idBits,
    config: leaseConfig(layout, ttlMs),
  };
}

/** The namespace configuration string, readable in error messages and in Redis (`HGET …:meta config`). @internal */
export function leaseConfig(layout: Layout, ttlMs: number): string {
  const { timestampBits, datacenterBits, workerBits, sequenceBits, timeUnitMs, epoch } = layout;
  return (
    `ttlMs=${ttlMs} layout=${timestampBits}/${datacenterBits}/${workerBits}/${sequenceBits} ` +
    `unit=${timeUnitMs}ms epoch=${epoch}`
  );
}
