import { PRELUDE, commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type ClaimReply = ServerStamp &
  (
    | { kind: 'ok'; id: number; floorMs: number; marker: string; expiry: number; held: number }
    | { kind: 'settling'; waitMs: number }
    /** `soonestExpiry`: when the first live lease lapses, server ms (-1 when none is live). */
    | { kind: 'exhausted'; held: number; soonestExpiry: number }
    | { kind: 'mismatch'; recorded: string; live: number }
    | { kind: 'busy' }
  );

export interface ClaimRequest {
  token: string;
  holderNowMs: number;
  host: string;
  pid: number;
  excluded: readonly number[];
}

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
 * Every answer that hands out an ID or reports exhaustion carries the number of live leases (`held`, this one
 * included), counted with one ZCOUNT on the expiry set against the server's `TIME` (O(log N), no scan); exhaustion
 * also carries the soonest expiry of a live lease, so that a claimer can wait for it instead of failing at once.
 *
 * Reply: {'ok', id, floor (previous ceiling, or -1), marker, expiry, held, now, run_id}
 *      | {'settling', wait ms, now, run_id} | {'exhausted', held, soonest expiry (or -1), now, run_id}
 *      | {'mismatch', the namespace's configuration, live leases, now, run_id}
 *      | {'busy', now, run_id} (live leases passed over at the cursor; claim again)
 */
export const CLAIM_SCRIPT = `${PRELUDE}
local prefix, token, count = ARGV[4], ARGV[5], tonumber(ARGV[6])
local holder_now, host, pid, excluded_list = tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[10]
local excluded = {}
for id in string.gmatch(excluded_list, '[^,]+') do excluded[id] = true end
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
    local soonest = redis.call('ZRANGEBYSCORE', EXPIRY, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    return {'exhausted', live_count(), tonumber(soonest[2] or '-1'), now, server}
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
  'host', host, 'pid', pid)
set_expiry(id, expiry)
return {'ok', tonumber(id), floor, marker, expiry, live_count(), now, server}
`;

/** The claim's arguments after the common three, in the order the Lua names them. */
export function claimArgs(
  settings: CommonSettings & { idCount: number },
  recordPrefix: string,
  request: ClaimRequest,
): (string | number)[] {
  return [
    ...commonArgs(settings, request.token),
    recordPrefix,
    request.token,
    settings.idCount,
    request.holderNowMs,
    request.host,
    request.pid,
    request.excluded.join(','),
  ];
}

export function decodeClaim(reply: unknown[]): ClaimReply {
  switch (String(reply[0])) {
    case 'ok':
      return {
        kind: 'ok',
        id: Number(reply[1]),
        floorMs: Number(reply[2]),
        marker: String(reply[3]),
        expiry: Number(reply[4]),
        held: Number(reply[5]),
        ...stamp(reply, 6),
      };
    case 'settling':
      return { kind: 'settling', waitMs: Number(reply[1]), ...stamp(reply, 2) };
    case 'exhausted':
      return { kind: 'exhausted', held: Number(reply[1]), soonestExpiry: Number(reply[2]), ...stamp(reply, 3) };
    case 'mismatch':
      return { kind: 'mismatch', recorded: String(reply[1]), live: Number(reply[2]), ...stamp(reply, 3) };
    case 'busy':
      return { kind: 'busy', ...stamp(reply, 1) };
    default:
      throw unexpected('claim', reply);
  }
}
