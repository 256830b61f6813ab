import { Redis, type Cluster } from 'ioredis';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';

/**
 * Starts a namespace as if its first-use settling had passed, for tests that are not about settling: a brand-new
 * namespace settles for 12 s (Redis cannot tell it from one that lost its data), which would add that to every
 * test that boots a fresh one. The meta is written as the scripts write it, backdated, without a contract (the
 * first claim records its own); a namespace that exists already is left alone. Tests about settling do not call it.
 */
export async function settledNamespace(
  redis: Redis | Cluster | string,
  namespace: string,
  datacenter: number | 'allocated' = 0,
): Promise<void> {
  const client = typeof redis === 'string' ? new Redis(redis) : redis;
  try {
    const keys = leaseKeys(
      { namespace, allocateDatacenter: datacenter === 'allocated' },
      datacenter === 'allocated' ? 0 : datacenter,
    );
    await client.eval(SETTLED_META, 1, keys.meta, SETTLE_AFTER_LOSS_MS);
  } finally {
    if (typeof redis === 'string') client.disconnect();
  }
}

const SETTLED_META = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local server = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') .. ':' ..
  (string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)') or '')
local settle = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], 'marker', 'settled-for-tests', 'created', now - settle - 1, 'settleMs', settle,
  'server', server, 'cursor', 0, 'members', 0, 'confirmed', 0)
return 1
`;
