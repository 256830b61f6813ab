/**
 * The lease's Lua scripts, one file each with its argument order and reply decoder; this one holds what they share. Each runs atomically in one round trip; all keys of a namespace share the hash tag
 * `{<namespace>}`, so a Redis Cluster keeps them on one slot. Times:
 * - expiries in the `expiry` sorted set are Redis server milliseconds (`TIME`), so leases lapse by one clock;
 * - ceilings and notes are the holder's own ID-time milliseconds, the frame the IDs carry, so a new holder
 *   compares its own timestamps with them however skewed the machines' clocks are.
 *
 * Keys, the same three for every script: KEYS[1] `meta` (hash: marker, created, settleMs, server, config, and the
 * mirrors `cursor` and `members` that reveal a partial loss), KEYS[2] `cursor` (the next never-used ID), KEYS[3]
 * `expiry` (sorted set ID → lease expiry). One hash per ID at `<recordPrefix><id>` (token, marker, ceiling, noted,
 * floor, claimed, host, pid).
 *
 * Arguments every script starts with: ARGV[1] ttl ms (the settling time of a marker this call creates), ARGV[2] the
 * caller's configuration (recorded by a marker this call creates), ARGV[3] a fresh random token (the value of a
 * marker this call creates).
 *
 * Every reply ends with the server time (ms) and the Redis process's `run_id`, so that the client measures its clock
 * offset on every round trip and can ask Sentinel whether this process is the master.
 */

import type { LeaseSettings } from '../lease.settings.js';

/**
 * Shared prelude: server time, the namespace marker and the check for a partial loss.
 *
 * The marker is created on first use and created anew when the Redis process serving the namespace changes (its
 * `run_id`): a restart may have loaded an older snapshot, and a promoted replica may have missed the last writes, so
 * records may be stale even where keys survived. It is also created anew when keys that must exist are gone while
 * the meta survived (an operator's DEL, eviction, a cleanup by pattern): the meta mirrors the cursor and the number
 * of IDs in the expiry set, and a mismatch is a loss, never "free". A new marker starts settling and tells every
 * holder at its next renewal that its lease may be lost.
 */
export const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local server = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
local META, CURSOR, EXPIRY = KEYS[1], KEYS[2], KEYS[3]
local TTL, CONFIG, FRESH = tonumber(ARGV[1]), ARGV[2], ARGV[3]

-- Starts a new marker: the namespace settles for the longer of this TTL and the one it settled with before (where
-- the meta survived, its configuration stands: the holders from before the change run with it). The mirrors take
-- the surviving keys as they are.
local function new_marker()
  local settled = tonumber(redis.call('HGET', META, 'settleMs') or '0')
  redis.call('HSET', META, 'marker', FRESH, 'created', now, 'settleMs', math.max(TTL, settled), 'server', server,
    'cursor', tonumber(redis.call('GET', CURSOR) or '0'), 'members', redis.call('ZCARD', EXPIRY))
  redis.call('HSETNX', META, 'config', CONFIG)
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
  if not marker or redis.call('HGET', META, 'server') ~= server or partly_lost() then return new_marker() end
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
}

/** What every script's arguments start with. */
export type CommonSettings = Pick<LeaseSettings, 'ttlMs' | 'config'>;

/** ARGV[1..3] of every script: ttl, configuration, a fresh token for a marker the call may create. */
export function commonArgs(settings: CommonSettings, freshToken: string): (string | number)[] {
  return [settings.ttlMs, settings.config, freshToken];
}

/** The server stamp at the end of a reply, from index `at`. */
export function stamp(reply: unknown[], at: number): ServerStamp {
  return { serverMs: Number(reply[at]), runId: String(reply[at + 1]) };
}

export function unexpected(script: string, reply: unknown[]): Error {
  return new Error(`unexpected ${script} reply ${JSON.stringify(reply)}`);
}
