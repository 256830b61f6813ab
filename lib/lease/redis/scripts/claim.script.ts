import { CLAIM_BURSTS } from './claim-bursts.lua.js';
import { LAYOUT_CHANGE } from './layout-change.lua.js';
import { PRELUDE } from './prelude.lua.js';

/**
 * Claims a worker ID: a never-used one first (the cursor), else the one whose lease expired longest ago
 * (`ZRANGEBYSCORE … LIMIT`, O(log N)), else reports exhaustion. Claims wait while the namespace settles after its
 * marker was (re)created, so that holders from before a Redis data loss have stopped first.
 *
 * Every key a script touches is declared, as Redis requires (a Cluster enforces it while a slot moves): the record
 * of the ID to claim is KEYS[4], so the caller names a candidate. The script works out which ID to hand out from the
 * cursor and the expiry set alone; when that is not the candidate, it answers `retry` with the right one and claims
 * nothing (it may still advance the cursor past IDs it passes over, and clear reservations whose grace ended). A
 * caller that remembers the last answer claims in one round trip unless another claim came between.
 *
 * The namespace records its contract (layout, TTL, fence margin, clock-back tolerance, clock bound). A claim with
 * another one is refused while any lease is live, or any ID is held back after a loss for the holder that lost it
 * (whose renewal recorded its contract); once neither is, the namespace takes the new contract, and another layout
 * only once its IDs lie above every ID the recorded one may have issued (layout-change.lua.ts): until then the answer
 * is `layout` with how long, which the caller waits for or refuses.
 *
 * A free ID whose record is gone (deleted, evicted) is handed out without a floor once one fence margin has passed
 * since its lease lapsed or was released: its last holder issued nothing after that, with timestamps no further
 * ahead of the server's clock than the contract's clock bound and tolerance, which the margin covers (the time rule,
 * as after a full loss). A holder of a contract this one replaced ran on its own clock numbers, which this margin
 * need not cover (a released lease gives up the margin a lapse leaves): the ID waits, too, until one margin after the
 * bound that contract change carried over (`issuedUntil`, layout-change.lua.ts), by which its holders had issued
 * their last timestamps. It never starts a new marker: a namespace whose records are evicted again and again still
 * hands out IDs.
 *
 * Claims that arrive together (many instances booting at once) would all name the same ID: one takes it, the rest are
 * sent to the next, so N at once cost about N^2 / 2 scripts. Two things keep a burst to about two scripts a claim:
 * - Retry answers within one second of each other name distinct IDs (claim-bursts.lua.ts).
 * - A claim that names the ID its last `retry` named, and finds it taken since, is contended: it is sent to one of
 *   the SPREAD next never-used IDs at the cursor, or of the SPREAD oldest expired IDs, picked by ARGV[12] (from a
 *   random source the caller injects, so that the simulator seeds it).
 * A claim naming such an ID takes it while it is still free. Without a burst nothing changes: the cursor's ID, else
 * the oldest expired one.
 *
 * After a loss, an ID may be reserved for the holder that lost it while the namespace settled (see the renewal): for
 * one TTL after settling ends, that holder's claim (naming the ID and its old token) is handed the ID first, and
 * every other claim passes it over as it passes an excluded ID; when nothing else is free the answer is `exhausted`
 * with the grace's end as the soonest expiry. An instance that was serving thus gets an ID back ahead of instances
 * that never booted.
 *
 * Which free ID a claim tries never matters for uniqueness: whichever ID is named, this script alone, atomically,
 * decides whether it may be handed out, with the same rules for every ID. A never-used ID (at or above the cursor,
 * never in the expiry set, which a partial loss cannot empty unseen: the prelude treats a missing expiry set as a
 * loss) has no earlier holder. Any other ID is handed out only when its lease has lapsed (expiry set score <= server
 * now) and not excluded, with the previous ceiling on its record as the floor, or, its record gone, one fence margin
 * after it lapsed (the time rule). An ID once taken through the spread (above the cursor) is in the expiry set, so
 * when the cursor reaches it later it is treated as used: live, it is passed over; lapsed, the same floor and
 * margin rules apply, never "never-used". The burst's order and the random pick only choose which of these checked IDs to try.
 *
 * KEYS[1..3] common, KEYS[4] the candidate's record.
 * ARGV[1..4] common, ARGV[5] token, ARGV[6] ID count, ARGV[7] holder clock ms, ARGV[8] host, ARGV[9] pid,
 * ARGV[10] excluded IDs (comma-separated, may be empty), ARGV[11] the candidate ID, ARGV[12] the spread pick
 * (-1 when the candidate was not named by the last reply), ARGV[13] the ID this instance lost while the namespace
 * settled (empty when none), ARGV[14] the token it held that ID by
 *
 * Every answer that hands out an ID or reports exhaustion carries the number of live leases (`held`, this one
 * included), counted with one ZCOUNT on the expiry set against the server's `TIME` (O(log N), no scan); exhaustion
 * also carries the soonest expiry of a live lease, so that a claimer can wait for it instead of failing at once.
 * The record starts at revision 0; each renewal of the lease writes the next (see the renewal).
 *
 * Reply: {'ok', id, floor (previous ceiling, or -1), marker, expiry, held, now, server}
 *      | {'settling', wait ms, now, server} | {'wait', wait ms, now, server} | {'retry', candidate, now, server}
 *      | {'exhausted', held, soonest expiry (or -1), now, server}
 *      | {'mismatch', the namespace's contract, live leases, IDs held back after a loss, now, server}
 *      | {'layout', the namespace's contract, ms until this layout's IDs lie above its IDs, now, server}
 *      | {'busy', now, server} (live leases passed over at the cursor; claim again)
 */
export const CLAIM_SCRIPT = `${PRELUDE}${LAYOUT_CHANGE}
local RECORD = KEYS[4]
-- How many IDs a contended claim spreads over: a storm of up to about this many claims at once lands mostly on
-- distinct IDs in one round. Picking the k-th expired ID walks k entries of the sorted set (microseconds).
local SPREAD = 1024
local spread = tonumber(ARGV[12] or '-1')
local token, count = ARGV[5], tonumber(ARGV[6])
local holder_now, host, pid, excluded_list, named = tonumber(ARGV[7]), ARGV[8], ARGV[9], ARGV[10], ARGV[11]
local excluded = {}
for id in string.gmatch(excluded_list, '[^,]+') do excluded[id] = true end
local marker = ensure_marker()

-- While the namespace settles no ID is handed out: not a never-used one, nor an expired one whose record may be
-- stale. By the end of it, every holder from before a data loss has renewed (taking its ID back, or seeing it lost)
-- or fenced itself. Settling comes before the contract: holders that take their IDs back during it, or have them held
-- back for them, decide the contract, not whoever sent the first script after the loss.
local left = settling_left()
if left > 0 then return {'settling', left, now, server} end

local recorded = redis.call('HGET', META, 'config')
if recorded ~= CONFIG then
  local live = live_count()
  -- IDs held back after a loss for the holders that lost them count as in use: those holders, whose contract their
  -- renewals recorded, are about to claim them again.
  local held_back = reservation_grace() and tonumber(redis.call('HGET', META, 'reserved')) or 0
  if recorded and live + held_back > 0 then return {'mismatch', recorded, live, held_back, now, server} end
  -- Another layout issues among the IDs already issued until its IDs pass them (layout-change.lua.ts).
  local layout_wait = layout_change_wait(recorded)
  if layout_wait > 0 then return {'layout', recorded, layout_wait, now, server} end
end
-- No live holder, nothing held back, no ID of the old layout ahead: the namespace takes this contract from now on (a
-- contract a new marker recorded for whoever came first stops being provisional once a claim runs under it).
adopt_contract(recorded)

-- Which ID to hand out, from the cursor and the expiry set alone. A never-used ID with a live lease (a holder took
-- it back after a data loss reset the cursor) is passed over, a few at a time, rather than handed to a second owner.
-- So is an excluded one, which joins the expiry set as long expired, so that it stays claimable later.
-- IDs reserved after a loss (see the renewal): the one reserved for this claim's prior token comes first; every
-- other claim passes reserved IDs over as it passes excluded ones, until one TTL after settling ends.
local prior_id, prior_token = ARGV[13] or '', ARGV[14] or ''
local grace_end = reservation_grace()
local mine = nil
if grace_end and prior_id ~= '' and reserved_for(prior_id) == prior_token then mine = prior_id end
-- Whether a claim passes an ID over: excluded by the caller, or reserved for another holder.
local function passed_over(candidate)
  -- An ID of the expiry set beyond this contract's count: left by holders of a wider layout before the namespace
  -- took this contract (it did once none was live). It does not fit this layout's worker field.
  local at = tonumber(candidate)
  if excluded[candidate] or (at and at >= count) then return true end
  return grace_end ~= nil and candidate ~= mine and reserved_for(candidate) ~= false
end

local id = nil
local lapsed = nil
local from_cursor = false
local cursor = tonumber(redis.call('GET', CURSOR) or '0')
local skips = 0
if mine then
  -- The reserved ID is handed out under the same rules as any other: expired (floor from its record or the time
  -- rule), or never used (at or above the cursor, not in the expiry set; above it, it joins the set as the spread's
  -- IDs do). Still live, it is not handed out; the claim takes another ID by the usual order.
  local score = redis.call('ZSCORE', EXPIRY, mine)
  local mine_at = tonumber(mine)
  if score and tonumber(score) <= now and mine_at < count then
    id = mine
    lapsed = tonumber(score)
  elseif not score and mine_at >= cursor and mine_at < count then
    id = mine
    from_cursor = mine_at == cursor
  end
end
while id == nil and cursor < count and skips < 16 do
  local candidate = tostring(cursor)
  local expiry_of = redis.call('ZSCORE', EXPIRY, candidate)
  if expiry_of and tonumber(expiry_of) > now then
    skips = skips + 1
    cursor = cursor + 1
  elseif passed_over(candidate) then
    skips = skips + 1
    cursor = cursor + 1
    if not expiry_of then set_expiry(candidate, 0) end
  else
    id = candidate
    from_cursor = true
    -- In the expiry set: used before (taken back after a loss, or through the spread), not never-used. Its floor
    -- comes from its record, or, the record gone, the time rule applies as to any expired ID.
    if expiry_of then lapsed = tonumber(expiry_of) end
  end
end
if cursor ~= tonumber(redis.call('GET', CURSOR) or '0') then set_cursor(cursor) end
if id == nil then
  local offset = 0
  while id == nil do
    local found = redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', now, 'WITHSCORES', 'LIMIT', offset, 8)
    if #found == 0 then break end
    for i = 1, #found, 2 do
      if not passed_over(found[i]) then
        id = found[i]
        lapsed = tonumber(found[i + 1])
        break
      end
    end
    offset = offset + #found / 2
  end
  -- Never-used IDs remain beyond the ones passed over: not exhausted, the caller claims again at once.
  if id == nil and cursor < count then return {'busy', now, server} end
  if id == nil then
    local soonest = redis.call('ZRANGEBYSCORE', EXPIRY, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
    local soonest_at = tonumber(soonest[2] or '-1')
    -- A reserved ID frees up for everyone when its grace ends.
    local others_reserved = grace_end and tonumber(redis.call('HGET', META, 'reserved')) > (mine and 1 or 0)
    if others_reserved and (soonest_at < 0 or grace_end < soonest_at) then soonest_at = grace_end end
    return {'exhausted', live_count(), soonest_at, now, server}
  end
end
${CLAIM_BURSTS}
local natural = id
local named_id = tonumber(named)
if id ~= named and id ~= mine and spread >= 0 and not passed_over(named) and named_id and named_id >= 0 and named_id < count
    and named_id % 1 == 0 and tostring(named_id) == named then
  local named_expiry = redis.call('ZSCORE', EXPIRY, named)
  if from_cursor then
    -- The named ID is one of the never-used IDs past the cursor that a contended claim was sent to: still free.
    if not named_expiry and named_id > cursor and named_id < math.min(count, cursor + SPREAD) then
      id = named
      lapsed = nil
      from_cursor = false
    end
  elseif named_expiry and tonumber(named_expiry) <= now
      and redis.call('ZCOUNT', EXPIRY, '-inf', '(' .. named_expiry) < SPREAD then
    -- The named ID is one of the oldest expired IDs that a contended claim was sent to: still expired.
    id = named
    lapsed = tonumber(named_expiry)
  end
  if id ~= named and named_expiry and tonumber(named_expiry) > now then
    -- Contended: the ID the last reply named was taken since. Send this claim to one of the next IDs, by its pick.
    id = spread_pick() or id
  end
end
if id ~= named and id == natural and id ~= mine then
  local pick = offer(natural)
  if pick ~= natural then
    -- What the ID offered instead is, for the take below when the claim happened to name it: a never-used ID past
    -- the cursor (the cursor stays where it is), or an expired one.
    if from_cursor then
      lapsed = nil
      from_cursor = false
    else
      lapsed = tonumber(redis.call('ZSCORE', EXPIRY, pick))
    end
    id = pick
  end
end
if id ~= named then return {'retry', tonumber(id), now, server} end

local floor = -1
if redis.call('EXISTS', RECORD) == 1 then
  -- After a data loss the cursor starts again, but a lost holder's note may already sit on the record.
  floor = floor_of(RECORD)
elseif lapsed ~= nil then
  -- The record is gone: the time rule covers the ID one fence margin after its lease lapsed or was released, and
  -- after the last timestamps of the contracts this one replaced.
  local covered = math.max(lapsed, tonumber(redis.call('HGET', META, 'issuedUntil') or '0')) + MARGIN
  if covered > now then return {'wait', covered - now, now, server} end
end
if from_cursor then set_cursor(cursor + 1) end
if lapsed ~= nil then offer_taken(id) end

local ceiling = math.max(holder_now, floor) + TTL
local expiry = now + TTL
redis.call('HSET', RECORD, 'token', token, 'marker', marker, 'ceiling', ceiling, 'floor', floor, 'claimed', now,
  'host', host, 'pid', pid, 'rev', 0)
set_expiry(id, expiry)
redis.call('HSET', META, 'confirmed', 1)
if id == mine then unreserve(mine) end
return {'ok', tonumber(id), floor, marker, expiry, live_count(), now, server}
`;
