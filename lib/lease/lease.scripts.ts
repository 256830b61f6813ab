/**
 * The lease's Lua scripts. Each runs atomically in one round trip; all keys of a namespace share the hash tag
 * `{<namespace>}`, so a Redis Cluster keeps them on one slot. Times:
 * - expiries in the `expiry` sorted set are Redis server milliseconds (`TIME`), so leases lapse by one clock;
 * - ceilings and notes are the holder's own ID-time milliseconds, the frame the IDs carry, so a new holder
 *   compares its own timestamps with them however skewed the machines' clocks are.
 *
 * Keys: `meta` (hash: marker, created, settleMs, server, config), `cursor` (the next never-used ID), `expiry` (sorted
 * set ID → lease expiry), and one hash per ID at `<recordPrefix><id>` (token, ceiling, noted, floor, claimed, host,
 * pid).
 */

/**
 * Shared prelude: server time, and the namespace marker. The marker is created on first use and created anew when
 * the Redis process serving the namespace changes (its `run_id`): a restart may have loaded an older snapshot, and a
 * promoted replica may have missed the last writes, so records may be stale even where keys survived. A new marker
 * starts settling and tells every holder at its next renewal that its lease is lost.
 */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local server = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
local function ensure_marker(meta, candidate, settle_ms, config)
  local marker = redis.call('HGET', meta, 'marker')
  if not marker or redis.call('HGET', meta, 'server') ~= server then
    marker = candidate
    -- Where the meta survived (a restart with persistence, a failover), its configuration and settling time stand:
    -- the holders from before the change run with them, whoever comes first after it.
    local settled = tonumber(redis.call('HGET', meta, 'settleMs') or '0')
    redis.call('HSET', meta, 'marker', marker, 'created', now, 'settleMs', math.max(settle_ms, settled), 'server', server)
    redis.call('HSETNX', meta, 'config', config)
  end
  return marker
end
-- The lowest timestamp a new holder of a record must stay above: its ceiling, or a lost holder's note if higher.
local function floor_of(key)
  local ceiling = tonumber(redis.call('HGET', key, 'ceiling') or '-1')
  local noted = tonumber(redis.call('HGET', key, 'noted') or '-1')
  return math.max(ceiling, noted)
end
`;

/**
 * Claims a worker ID: a never-used one first (the cursor), else the one whose lease expired longest ago
 * (`ZRANGEBYSCORE … LIMIT`, O(log N)), else reports exhaustion. Claims wait while the namespace settles after its
 * marker was (re)created, so that holders from before a Redis data loss have stopped first.
 *
 * The namespace records the configuration its holders run with (layout and TTL). A claim with another one is
 * refused while any lease is live: settling lasts the TTL of whoever recreates the marker, so a holder with a longer
 * TTL could still be issuing when it ends, and a reused ID under another layout would not be covered by its floor.
 *
 * KEYS[1] meta, KEYS[2] cursor, KEYS[3] expiry
 * ARGV[1] record key prefix, ARGV[2] token, ARGV[3] ttl ms, ARGV[4] ID count, ARGV[5] holder clock ms,
 * ARGV[6] host, ARGV[7] pid, ARGV[8] excluded IDs (comma-separated, may be empty), ARGV[9] configuration
 *
 * Reply: {'ok', id, floor (previous ceiling, or -1), server ms, marker, expiry}
 *      | {'settling', wait ms, server ms} | {'exhausted', held count, server ms}
 *      | {'mismatch', the namespace's configuration, live leases, server ms}
 *      | {'busy', server ms} (live leases passed over at the cursor; claim again)
 */
export const CLAIM_SCRIPT = `${PRELUDE}
local prefix, token, ttl, count = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local holder_now = tonumber(ARGV[5])
local excluded = {}
for id in string.gmatch(ARGV[8], '[^,]+') do excluded[id] = true end
local config = ARGV[9]
local marker = ensure_marker(KEYS[1], token, ttl, config)

local recorded = redis.call('HGET', KEYS[1], 'config')
if recorded ~= config then
  local live = redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
  if recorded and live > 0 then return {'mismatch', recorded, live, now} end
  -- No live holder: the namespace takes this configuration from now on, and its TTL as the settling time unless a
  -- settling is under way.
  redis.call('HSET', KEYS[1], 'config', config)
  local created = tonumber(redis.call('HGET', KEYS[1], 'created'))
  if now >= created + tonumber(redis.call('HGET', KEYS[1], 'settleMs')) then
    redis.call('HSET', KEYS[1], 'settleMs', ttl)
  end
end

-- While the namespace settles no ID is handed out: not a never-used one, nor an expired one whose record may be
-- stale. By the end of it, every holder from before a data loss has seen its lease lost or fenced itself.
local settle_until = tonumber(redis.call('HGET', KEYS[1], 'created')) + tonumber(redis.call('HGET', KEYS[1], 'settleMs'))
if now < settle_until then
  return {'settling', settle_until - now, now}
end

local id = nil
local floor = -1
local cursor = tonumber(redis.call('GET', KEYS[2]) or '0')
-- A never-used ID has no live lease; one that has (the cursor key was evicted, against the documented
-- noeviction policy) is passed over, a few at a time, rather than handed to a second owner. So is an excluded one
-- (after a data loss the cursor starts again and may meet the ID a switch moves away from).
local skips = 0
while id == nil and cursor < count and skips < 16 do
  local candidate = tostring(cursor)
  cursor = cursor + 1
  local expiry_of = redis.call('ZSCORE', KEYS[3], candidate)
  if excluded[candidate] or (expiry_of and tonumber(expiry_of) > now) then
    skips = skips + 1
  else
    id = candidate
    -- After a data loss the cursor starts again, but a lost holder's note may already sit on the record.
    if redis.call('EXISTS', prefix .. id) == 1 then floor = floor_of(prefix .. id) end
  end
end
redis.call('SET', KEYS[2], cursor)
if id == nil then
  local offset = 0
  while id == nil do
    local found = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', offset, 8)
    if #found == 0 then break end
    for _, candidate in ipairs(found) do
      if not excluded[candidate] then id = candidate break end
    end
    offset = offset + #found
  end
  -- Never-used IDs remain beyond the ones passed over: not exhausted, the caller claims again at once.
  if id == nil and cursor < count then return {'busy', now} end
  if id == nil then
    return {'exhausted', redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf'), now}
  end
  if redis.call('EXISTS', prefix .. id) == 1 then floor = floor_of(prefix .. id) end
end

local key = prefix .. id
local ceiling = math.max(holder_now, floor) + ttl
local expiry = now + ttl
redis.call('HSET', key, 'token', token, 'ceiling', ceiling, 'floor', floor, 'claimed', now, 'host', ARGV[6], 'pid', ARGV[7])
redis.call('ZADD', KEYS[3], expiry, id)
return {'ok', tonumber(id), floor, now, marker, expiry}
`;

/**
 * Renews a lease and raises its ceiling, only while the token still owns the ID, the namespace marker is the one the
 * holder claimed under (a new marker means Redis may have lost writes) and the namespace runs the holder's
 * configuration.
 *
 * KEYS[1] meta, KEYS[2] expiry
 * ARGV[1] record key, ARGV[2] id, ARGV[3] token, ARGV[4] ttl ms, ARGV[5] new ceiling (holder ms), ARGV[6] marker,
 * ARGV[7] configuration (recorded if this renewal is the first to see a new marker)
 *
 * Reply: {'ok', server ms, expiry} | {'lost', reason, server ms}
 */
export const RENEW_SCRIPT = `${PRELUDE}
local key, id, token, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local marker = ensure_marker(KEYS[1], token, ttl, ARGV[7])
if marker ~= ARGV[6] then return {'lost', 'marker', now} end
-- The namespace took another configuration while this holder was paused past its lease: it must not go on.
if redis.call('HGET', KEYS[1], 'config') ~= ARGV[7] then return {'lost', 'config', now} end
local owner = redis.call('HGET', key, 'token')
if owner ~= token then return {'lost', owner and 'taken' or 'missing', now} end
local ceiling = math.max(tonumber(redis.call('HGET', key, 'ceiling') or '0'), tonumber(ARGV[5]))
local expiry = now + ttl
redis.call('HSET', key, 'ceiling', ceiling)
redis.call('ZADD', KEYS[2], expiry, id)
return {'ok', now, expiry}
`;

/**
 * Gives a lease back: records the holder's exact last issued timestamp as the ceiling, so the next holder may
 * start right after it, and marks the ID expired now. A note a lost holder left (`noted`) stays: the next holder's
 * floor is the higher of the two.
 *
 * KEYS[1] expiry
 * ARGV[1] record key, ARGV[2] id, ARGV[3] token, ARGV[4] last issued timestamp (holder ms)
 *
 * Reply: {'released', server ms} | {'not-owner', server ms}
 */
export const RELEASE_SCRIPT = `${PRELUDE}
local key, id, token = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', key, 'token') ~= token then return {'not-owner', now} end
redis.call('HSET', key, 'ceiling', ARGV[4])
redis.call('HDEL', key, 'token')
redis.call('ZADD', KEYS[1], now, id)
return {'released', now}
`;

/**
 * Leaves a note of a lost holder's last issued timestamp on the record (raising the ceiling and `noted`, never
 * lowering them), so that whoever holds the ID next starts above it. A record that vanished with Redis's data is recreated as an
 * expired lease carrying the note.
 *
 * KEYS[1] expiry
 * ARGV[1] record key, ARGV[2] id, ARGV[3] last issued timestamp (holder ms)
 *
 * Reply: {'noted', server ms}
 */
export const NOTE_SCRIPT = `${PRELUDE}
local key, id, last = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ceiling = tonumber(redis.call('HGET', key, 'ceiling') or '-1')
local noted = tonumber(redis.call('HGET', key, 'noted') or '-1')
if last > ceiling then redis.call('HSET', key, 'ceiling', last) end
-- Kept apart from the ceiling, which the current holder's release lowers to its own last timestamp.
if last > noted then redis.call('HSET', key, 'noted', last) end
if redis.call('ZSCORE', KEYS[1], id) == false then redis.call('ZADD', KEYS[1], now, id) end
return {'noted', now}
`;
