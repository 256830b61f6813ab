import { Redis } from 'ioredis';
import { resolveLayout } from '../../lib/core/layout.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { resolveLeaseSettings } from '../../lib/lease/lease.settings.js';
import { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import type { ManualClock, WorkerSourceFactory } from '../../lib/testing.js';
import type { WorkerIdSource } from '../../lib/worker/worker-source.js';
import { settledNamespace } from './settled-namespace.js';
import { uniqueNamespace } from './shared-redis.js';

/** 2 worker bits: 4 worker IDs, so that the conformance cases force reuse. */
const LAYOUT = resolveLayout({ workerBits: 2 });
const TTL_MS = 5000;

/**
 * The Redis lease as the conformance suite runs it on the redis-server at `url`: one ioredis client per source (so
 * that one source can be cut off by closing its client), a fresh namespace per case, and faults made with an admin
 * connection.
 */
export function redisLeaseFactory(url: string): WorkerSourceFactory & { close(): Promise<void> } {
  const admin = new Redis(url);
  const clients = new Map<WorkerIdSource, Redis>();
  let namespace = uniqueNamespace('conformance');
  const settingsFor = (client?: Redis) =>
    resolveLeaseSettings({ client: client ?? admin, namespace, ttlMs: TTL_MS }, LAYOUT);
  const sample = settingsFor();
  return {
    name: 'Redis lease',
    layout: LAYOUT,
    workerIdCount: sample.idCount,
    ttlMs: sample.ttlMs,
    fenceMarginMs: sample.fenceMarginMs,
    renewIntervalMs: sample.renewIntervalMs,
    clockBackToleranceMs: sample.clockBackToleranceMs,
    // Inside redis.maxClockOffsetMs, with room for the measurement's error.
    maxClockSkewMs: sample.maxClockOffsetMs - 50,
    create(_clock: ManualClock) {
      // No reconnects of its own: a partition lasts until the case heals it.
      const client = new Redis(url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => undefined);
      const source = new RedisWorkerSource(settingsFor(client), 0);
      clients.set(source, client);
      return source;
    },
    async reset() {
      namespace = uniqueNamespace('conformance');
      await settledNamespace(admin, namespace);
    },
    capabilities: {
      partition: (source) => clients.get(source)?.disconnect(),
      heal: async (source) => {
        await clients.get(source)?.connect();
      },
      loseLease: async (workerId) => {
        const { recordPrefix } = leaseKeys(settingsFor(), 0);
        await admin.hset(`${recordPrefix}${workerId}`, 'token', 'taken-by-another');
      },
      loseData: async () => {
        await admin.flushall();
      },
    },
    async close() {
      for (const client of clients.values()) client.disconnect();
      admin.disconnect();
    },
  };
}
