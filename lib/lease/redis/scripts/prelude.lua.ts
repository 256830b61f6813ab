/**
 * The lease's Lua scripts, one file each with its argument order and reply decoder; this one holds what they share. Each runs atomically in one round trip; all keys of a namespace share the hash tag
 * `{<namespace>}`, so a Redis Cluster keeps them on one slot. Times:
 * - expiries in the `expiry` sorted set are Redis server milliseconds (`TIME`), so leases lapse by one clock;
 * - ceilings and notes are the holder's own ID-time milliseconds, the frame the IDs carry, so a new holder
 *   compares its own timestamps with them however skewed the machines' clocks are.
 *
 * Keys: KEYS[1..3] the same for every script, KEYS[4] the one record it touches (every key a script touches is
 * declared, as Redis requires and a Cluster enforces while a slot moves). KEYS[1] `meta` (hash: marker, created, settleMs, server, config,
 * confirmed, cause, the mirrors `cursor` and `members` that reveal a partial loss, and `reserved` with one
 * `reserved:<id>` per ID held back for the holder that lost it while the namespace settled; `configAt` and `issuedUntil`
 * for the layout rule, layout-change.lua.ts), KEYS[2] `cursor` (the next
 * never-used ID), KEYS[3] `expiry` (sorted set ID → lease expiry). One hash per ID at `<recordPrefix><id>` (token,
 * marker, ceiling, noted, floor, claimed, host, pid, rev).
 *
 * Arguments every script starts with: ARGV[1] ttl ms, ARGV[2] the caller's contract (lease.contract.ts; recorded by
 * a marker this call creates), ARGV[3] a fresh random token (the value of a marker this call creates), ARGV[4] the
 * fence margin ms.
 *
 * Every reply ends with the server time (ms) and the Redis process's identity (`run_id:master_replid`), so that
 * the client measures its clock offset on every round trip and can ask Sentinel whether this process is the master.
 */

import { SETTLE_AFTER_LOSS_MS } from '../../lease.contract.js';
import type { LeaseSettings } from '../../lease.settings.js';

/**
 * Shared prelude: server time, the namespace marker and the check for a partial loss.
 *
 * The marker is created on first use and created anew when the Redis process serving the namespace changes (its
 * `run_id`) or its data came from elsewhere (its replication ID: a resync from another node, a promotion): a restart
 * may have loaded an older snapshot, and a promoted replica may have missed the last writes, so records may be stale
 * even where keys survived. It is also created anew when keys that must exist are gone while the meta survived (an
 * operator's DEL, eviction, a cleanup by pattern): the meta mirrors the cursor and the number of IDs in the expiry
 * set, and a mismatch is a loss, never "free". A new marker starts settling and tells every holder at its next
 * renewal that its lease may be lost.
 */
export const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local server = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') .. ':' ..
  (string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)') or '')
local META, CURSOR, EXPIRY = KEYS[1], KEYS[2], KEYS[3]
local TTL, CONFIG, FRESH, MARGIN = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
-- Whoever creates a marker, the namespace settles this long (lease.contract.ts): a data loss erased the fleet's
-- contract, so the first script after it must not shorten settling with a TTL of its own.
local SETTLE = ${SETTLE_AFTER_LOSS_MS}

-- Reservations after a loss: a meta field \`reserved:<id>\` = token per ID held back for the holder that lost it while
-- the namespace settled (see the renewal), \`reserved\` = how many there are, and \`reservedTtl\` = the TTL of the
-- holders they are held for. They hold for that TTL after settling ends, whatever TTL the script that looks runs with
-- (a claim with another contract does not shorten them). Each is read by its own field (O(1) per ID a claim looks
-- at), never as a list.
local function reserved_for(id)
  return redis.call('HGET', META, 'reserved:' .. id)
end

local function clear_reservations()
  local fields = redis.call('HGETALL', META)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 9) == 'reserved:' then redis.call('HDEL', META, fields[i]) end
  end
  redis.call('HDEL', META, 'reserved', 'reservedTtl')
end

-- The end of the reservations' grace while any are in force, else nil (clearing those whose grace has ended).
local function reservation_grace()
  if tonumber(redis.call('HGET', META, 'reserved') or '0') == 0 then return nil end
  local grace_end = tonumber(redis.call('HGET', META, 'created')) + tonumber(redis.call('HGET', META, 'settleMs'))
    + tonumber(redis.call('HGET', META, 'reservedTtl') or TTL)
  if now < grace_end then return grace_end end
  clear_reservations()
  return nil
end

local function reserve(id, token)
  if redis.call('HSET', META, 'reserved:' .. id, token) == 1 then redis.call('HINCRBY', META, 'reserved', 1) end
  redis.call('HSET', META, 'reservedTtl', TTL)
end

local function unreserve(id)
  if redis.call('HDEL', META, 'reserved:' .. id) == 1 and redis.call('HINCRBY', META, 'reserved', -1) <= 0 then
    redis.call('HDEL', META, 'reserved', 'reservedTtl')
  end
end

-- Starts a new marker. Where the meta survived, its contract stands until the holders from before the change
-- confirm it again by taking their IDs back (\`confirmed\` 0 until then). The mirrors take the surviving keys as
-- they are. \`cause\` says why, for the holders' logs: 'server' when only the Redis process serving the namespace
-- changed (a failover, a slot move, a restart) and every key that must exist is there; anything else is a loss.
local function new_marker(cause)
  -- Members of the expiry set are gone (deleted, evicted): an ID whose holder never comes back would be in neither
  -- the cursor's range nor the set, and never handed out again. The cursor starts again, as after a full loss: it
  -- passes over the IDs holders take back, and the others are covered by the settling, as after a full loss.
  -- Without the meta's mirror (the meta was lost too, with or without the set) nothing says the set is whole, so
  -- the cursor starts again as well.
  local members = redis.call('HGET', META, 'members')
  if not members or redis.call('ZCARD', EXPIRY) < tonumber(members) then
    redis.call('DEL', CURSOR)
  end
  redis.call('HSET', META, 'marker', FRESH, 'created', now, 'settleMs', SETTLE, 'server', server,
    'cursor', tonumber(redis.call('GET', CURSOR) or '0'), 'members', redis.call('ZCARD', EXPIRY), 'confirmed', 0,
    'cause', cause)
  redis.call('HSETNX', META, 'config', CONFIG)
  -- Reservations belong to the marker they were made under (see the renewal and the claim).
  if redis.call('HGET', META, 'reserved') then clear_reservations() end
  return FRESH
end


local function partly_lost()
  local cursor = tonumber(redis.call('GET', CURSOR) or '0')
  local members = redis.call('ZCARD', EXPIRY)
  return cursor ~= tonumber(redis.call('HGET', META, 'cursor') or '-1')
    or members ~= tonumber(redis.call('HGET', META, 'members') or '-1')
end

local function ensure_marker()
  local marker = redis.call('HGET', META, 'marker')
  if not marker then return new_marker('absent') end
  if partly_lost() then return new_marker('partial') end
  if redis.call('HGET', META, 'server') ~= server then return new_marker('server') end
  return marker
end

local function settling_left()
  local left = tonumber(redis.call('HGET', META, 'created')) + tonumber(redis.call('HGET', META, 'settleMs')) - now
  return math.max(left, 0)
end

-- Every write to the expiry set goes through here, so that the mirror counts its members.
local function set_expiry(id, score)
  if redis.call('ZADD', EXPIRY, score, id) == 1 then redis.call('HINCRBY', META, 'members', 1) end
end

local function set_cursor(cursor)
  redis.call('SET', CURSOR, cursor)
  redis.call('HSET', META, 'cursor', cursor)
end

-- Live leases of the namespace: one ZCOUNT against the server's time, O(log N) whatever the number held.
local function live_count()
  return redis.call('ZCOUNT', EXPIRY, '(' .. now, '+inf')
end

-- The lowest timestamp a new holder of a record must stay above: its ceiling, or a lost holder's note if higher.
local function floor_of(key)
  local ceiling = tonumber(redis.call('HGET', key, 'ceiling') or '-1')
  local noted = tonumber(redis.call('HGET', key, 'noted') or '-1')
  return math.max(ceiling, noted)
end
`;

/** Where every reply ends: the server's time and the Redis process that ran the script. */
export interface ServerStamp {
  /** Redis server time (`TIME`), ms. */
  serverMs: number;
  /** The Redis process's `run_id`: Sentinel names the master by it. */
  runId: string;
  /** The process's replication ID: it changes when the data came from elsewhere (a resync, a promotion). */
  replId: string;
}

/** What every script's arguments start with. */
export type CommonSettings = Pick<LeaseSettings, 'ttlMs' | 'config' | 'fenceMarginMs'>;

/** ARGV[1..4] of every script: ttl, contract, a fresh token for a marker the call may create, fence margin. */
export function commonArgs(settings: CommonSettings, freshToken: string): (string | number)[] {
  return [settings.ttlMs, settings.config, freshToken, settings.fenceMarginMs];
}

/** The server stamp at the end of a reply, from index `at`: the server's time, then `run_id:master_replid`. */
export function stamp(reply: unknown[], at: number): ServerStamp {
  const [runId, replId = ''] = String(reply[at + 1]).split(':');
  return { serverMs: Number(reply[at]), runId, replId };
}

export function unexpected(script: string, reply: unknown[]): Error {
  return new Error(`unexpected ${script} reply ${JSON.stringify(reply)}`);
}
