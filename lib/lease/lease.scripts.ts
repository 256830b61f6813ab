/**
 * The lease's Lua scripts. Each runs atomically in one round trip; all keys of a namespace share the hash tag
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
const PRELUDE = `
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
 * ARGV[1..3] common, ARGV[4] record key prefix, ARGV[5] token, ARGV[6] ID count, ARGV[7] holder clock ms,
 * ARGV[8] host, ARGV[9] pid, ARGV[10] excluded IDs (comma-separated, may be empty)
 *
 * Reply: {'ok', id, floor (previous ceiling, or -1), marker, expiry, now, run_id}
 *      | {'settling', wait ms, now, run_id} | {'exhausted', held count, now, run_id}
 *      | {'mismatch', the namespace's configuration, live leases, now, run_id}
 *      | {'busy', now, run_id} (live leases passed over at the cursor; claim again)
 */
export const CLAIM_SCRIPT = `${PRELUDE}
local prefix, token, count = ARGV[4], ARGV[5], tonumber(ARGV[6])
local holder_now = tonumber(ARGV[7])
local excluded = {}
for id in string.gmatch(ARGV[10], '[^,]+') do excluded[id] = true end
local marker = ensure_marker()

local recorded = redis.call('HGET', META, 'config')
if recorded ~= CONFIG then
  local live = redis.call('ZCOUNT', EXPIRY, '(' .. now, '+inf')
  if recorded and live > 0 then return {'mismatch', recorded, live, now, server} end
  -- No live holder: the namespace takes this configuration from now on, and its TTL as the settling time unless a
  -- settling is under way.
  redis.call('HSET', META, 'config', CONFIG)
  if settling_left() == 0 then redis.call('HSET', META, 'settleMs', TTL) end
end

-- While the namespace settles no ID is handed out: not a never-used one, nor an expired one whose record may be
-- stale. By the end of it, every holder from before a data loss has renewed (taking its ID back, or seeing it lost)
-- or fenced itself.
local left = settling_left()
if left > 0 then return {'settling', left, now, server} end

local id = nil
local floor = -1
local cursor = tonumber(redis.call('GET', CURSOR) or '0')
-- A never-used ID with a live lease (a holder took it back after a data loss reset the cursor) is passed over, a
-- few at a time, rather than handed to a second owner. So is an excluded one, which joins the expiry set as
-- expired so that it stays claimable later.
local skips = 0
while id == nil and cursor < count and skips < 16 do
  local candidate = tostring(cursor)
  cursor = cursor + 1
  local expiry_of = redis.call('ZSCORE', EXPIRY, candidate)
  if expiry_of and tonumber(expiry_of) > now then
    skips = skips + 1
  elseif excluded[candidate] then
    skips = skips + 1
    if not expiry_of then
      set_expiry(candidate, 0)
      redis.call('HSETNX', prefix .. candidate, 'ceiling', -1)
    end
  else
    id = candidate
    -- After a data loss the cursor starts again, but a lost holder's note may already sit on the record.
    if redis.call('EXISTS', prefix .. id) == 1 then floor = floor_of(prefix .. id) end
  end
end
set_cursor(cursor)
if id == nil then
  local offset = 0
  while id == nil do
    local found = redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', now, 'LIMIT', offset, 8)
    if #found == 0 then break end
    for _, candidate in ipairs(found) do
      if not excluded[candidate] then id = candidate break end
    end
    offset = offset + #found
  end
  -- Never-used IDs remain beyond the ones passed over: not exhausted, the caller claims again at once.
  if id == nil and cursor < count then return {'busy', now, server} end
  if id == nil then
    return {'exhausted', redis.call('ZCOUNT', EXPIRY, '(' .. now, '+inf'), now, server}
  end
  -- Every ID in the expiry set has a record: one that is gone was deleted, and with it the floor of that ID.
  if redis.call('EXISTS', prefix .. id) == 0 then
    new_marker()
    return {'settling', settling_left(), now, server}
  end
  floor = floor_of(prefix .. id)
end

local key = prefix .. id
local ceiling = math.max(holder_now, floor) + TTL
local expiry = now + TTL
redis.call('HSET', key, 'token', token, 'marker', marker, 'ceiling', ceiling, 'floor', floor, 'claimed', now,
  'host', ARGV[8], 'pid', ARGV[9])
set_expiry(id, expiry)
return {'ok', tonumber(id), floor, marker, expiry, now, server}
`;

/**
 * Renews a lease and raises its ceiling, while the token still owns the ID under the marker the holder claimed
 * under and the namespace runs the holder's configuration.
 *
 * When the marker changed (Redis lost its data, restarted from a snapshot, failed over, or lost some keys), the
 * holder takes its ID back into the new data, but only with proof that its lease had not lapsed when this request
 * arrived: the previous lease's expiry (server ms, from the last confirmed renewal) must lie more than a margin
 * ahead of this server's time, the namespace must still be settling (no ID has been handed out since the loss), and
 * no other holder may have taken the ID back under the new marker. A holder paused past its lease fails the first
 * test even when its request was written before the pause. Taking it back restores the record's ceiling.
 *
 * ARGV[1..3] common, ARGV[4] record key, ARGV[5] id, ARGV[6] token, ARGV[7] new ceiling (holder ms), ARGV[8] the
 * holder's marker, ARGV[9] the previous lease's expiry (server ms), ARGV[10] the margin of that test (ms)
 *
 * Reply: {'ok', expiry, marker, now, run_id} | {'recovered', expiry, marker, now, run_id}
 *      | {'lost', reason, now, run_id}
 */
export const RENEW_SCRIPT = `${PRELUDE}
local key, id, token = ARGV[4], ARGV[5], ARGV[6]
local wanted_ceiling, held_marker = tonumber(ARGV[7]), ARGV[8]
local previous_expiry, margin = tonumber(ARGV[9]), tonumber(ARGV[10])
local marker = ensure_marker()
-- The holder's record is gone while the rest survived: a partial loss, which makes the whole namespace settle.
if marker == held_marker and redis.call('EXISTS', key) == 0 then marker = new_marker() end
local expiry = now + TTL
if marker ~= held_marker then
  if now + margin >= previous_expiry then return {'lost', 'marker', now, server} end
  if settling_left() == 0 then return {'lost', 'marker', now, server} end
  local owner = redis.call('HGET', key, 'token')
  if owner and owner ~= token and redis.call('HGET', key, 'marker') == marker then
    return {'lost', 'taken', now, server}
  end
  redis.call('HSETNX', META, 'config', CONFIG)
  local ceiling = math.max(floor_of(key), wanted_ceiling)
  redis.call('HSET', key, 'token', token, 'marker', marker, 'ceiling', ceiling, 'claimed', now)
  set_expiry(id, expiry)
  return {'recovered', expiry, marker, now, server}
end
-- The namespace took another configuration while this holder was paused past its lease: it must not go on.
if redis.call('HGET', META, 'config') ~= CONFIG then return {'lost', 'config', now, server} end
local owner = redis.call('HGET', key, 'token')
if owner ~= token then return {'lost', owner and 'taken' or 'missing', now, server} end
local ceiling = math.max(tonumber(redis.call('HGET', key, 'ceiling') or '0'), wanted_ceiling)
redis.call('HSET', key, 'ceiling', ceiling)
set_expiry(id, expiry)
return {'ok', expiry, marker, now, server}
`;

/**
 * Gives a lease back: records the holder's exact last issued timestamp as the ceiling, so the next holder may
 * start right after it, and marks the ID expired now. A note a lost holder left (`noted`) stays: the next holder's
 * floor is the higher of the two.
 *
 * ARGV[1..3] common, ARGV[4] record key, ARGV[5] id, ARGV[6] token, ARGV[7] last issued timestamp (holder ms)
 *
 * Reply: {'released', now, run_id} | {'not-owner', now, run_id}
 */
export const RELEASE_SCRIPT = `${PRELUDE}
local key, id, token = ARGV[4], ARGV[5], ARGV[6]
ensure_marker()
if redis.call('HGET', key, 'token') ~= token then return {'not-owner', now, server} end
redis.call('HSET', key, 'ceiling', ARGV[7])
redis.call('HDEL', key, 'token')
set_expiry(id, now)
return {'released', now, server}
`;

/**
 * Leaves a note of a holder's last issued timestamp on the record (raising the ceiling and `noted`, never lowering
 * them), so that whoever holds the ID next starts above it. A record that vanished with Redis's data is recreated
 * as an expired lease carrying the note.
 *
 * ARGV[1..3] common, ARGV[4] record key, ARGV[5] id, ARGV[6] last issued timestamp (holder ms)
 *
 * Reply: {'noted', now, run_id}
 */
export const NOTE_SCRIPT = `${PRELUDE}
local key, id, last = ARGV[4], ARGV[5], tonumber(ARGV[6])
ensure_marker()
local ceiling = tonumber(redis.call('HGET', key, 'ceiling') or '-1')
local noted = tonumber(redis.call('HGET', key, 'noted') or '-1')
if last > ceiling then redis.call('HSET', key, 'ceiling', last) end
-- Kept apart from the ceiling, which the current holder's release lowers to its own last timestamp.
if last > noted then redis.call('HSET', key, 'noted', last) end
if redis.call('ZSCORE', EXPIRY, id) == false then set_expiry(id, now) end
return {'noted', now, server}
`;
