/**
 * The claim script's part for claims that arrive together (see claim.script.ts): which ID a `retry` answer names
 * during a burst, and where a contended claim is spread. Lua text spliced into the claim script where its locals are
 * in scope: `now`, `count`, `cursor`, `from_cursor`, `spread`, `SPREAD`, `passed_over` and the prelude's keys. Which ID is named never
 * decides whether it may be handed out: the claim script alone decides that, by the same rules for every ID.
 */
export const CLAIM_BURSTS = `
-- Retry answers closer together than this (server ms) are one burst: each names the ID after the previous one's.
local OFFER_WINDOW = 1000

-- The ID a \`retry\` answer names. Claims that arrive together (instances booting at once) all name the same first
-- guess, and every one of them would be sent to the same ID: one takes it, the others find it taken and are spread
-- at random, and about a third of those collide again. Instead, while retry answers follow each other within
-- OFFER_WINDOW, each names the next free ID after the one the previous answer named, in the order claims take them
-- (never-used IDs from the cursor on, or expired IDs oldest first, at most SPREAD deep, as a named ID must be to be
-- taken): a burst's claims name distinct IDs and take them with their second script. Outside a burst the answer is
-- the natural one (the cursor's ID, else the oldest expired), so claims one at a time keep the order. The meta
-- remembers the last answer (\`offered\` = \`c:<id>\` or \`e:<id>\`, with \`offeredAt\` and, for an expired ID, its
-- \`offeredScore\`). Only the order changes: whichever ID a claim names, the rules above decide whether it is handed out.
local function offer(natural)
  local remembered = redis.call('HMGET', META, 'offered', 'offeredAt', 'offeredScore')
  local last, last_at, last_score = remembered[1], remembered[2], remembered[3]
  local pick, pick_score = natural, nil
  local mode, last_id = nil, nil
  if last and now - tonumber(last_at) <= OFFER_WINDOW then mode, last_id = string.match(last, '^(%a):(.*)$') end
  if from_cursor and mode == 'c' and tonumber(last_id) then
    local at = math.max(tonumber(natural), tonumber(last_id) + 1)
    local limit = math.min(count, cursor + SPREAD)
    local steps = 0
    while at < limit and steps < 16 and (passed_over(tostring(at)) or redis.call('ZSCORE', EXPIRY, tostring(at))) do
      at = at + 1
      steps = steps + 1
    end
    if at < limit and steps < 16 then pick = tostring(at) end
  elseif not from_cursor and mode == 'e' then
    -- The expired IDs after the last one named: after its rank while it is still expired, else after every ID as old
    -- as it was (it was taken since; the IDs before it moved up, and those named before it are among them).
    -- (\`e:-\`: the last one named was the oldest, and was taken: from the start.)
    local score = last_id ~= '-' and redis.call('ZSCORE', EXPIRY, last_id)
    local from = 0
    if score and tonumber(score) <= now then
      from = redis.call('ZRANK', EXPIRY, last_id) + 1
    elseif last_id ~= '-' then
      from = redis.call('ZCOUNT', EXPIRY, '-inf', last_score)
    end
    if from < SPREAD then
      local found = redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', now, 'WITHSCORES', 'LIMIT', from, math.min(8, SPREAD - from))
      for i = 1, #found, 2 do
        if not passed_over(found[i]) then
          pick, pick_score = found[i], found[i + 1]
          break
        end
      end
    end
  end
  if not from_cursor and pick_score == nil then pick_score = redis.call('ZSCORE', EXPIRY, pick) end
  redis.call('HSET', META, 'offered', (from_cursor and 'c:' or 'e:') .. pick, 'offeredAt', now,
    'offeredScore', pick_score or '-inf')
  return pick
end

-- A contended claim's ID: one of the SPREAD next never-used IDs at the cursor, or of the SPREAD oldest expired ones,
-- by the claim's random pick (\`spread\`); nil when the picked one is not free.
local function spread_pick()
  if from_cursor then
    local width = math.min(count - cursor, SPREAD)
    local other = cursor + spread % width
    local key = tostring(other)
    if other ~= cursor and not passed_over(key) and not redis.call('ZSCORE', EXPIRY, key) then return key end
    return nil
  end
  local width = math.min(redis.call('ZCOUNT', EXPIRY, '-inf', now), SPREAD)
  local found = redis.call('ZRANGEBYSCORE', EXPIRY, '-inf', now, 'LIMIT', spread % width, 1)
  if found[1] and not passed_over(found[1]) then return found[1] end
  return nil
end

-- Called when the claim takes an expired ID: when it is the one the burst named last, the burst goes on after the ID
-- before it (the IDs after it move up).
local function offer_taken(taken)
  if redis.call('HGET', META, 'offered') ~= 'e:' .. taken then return end
  local rank = redis.call('ZRANK', EXPIRY, taken)
  local before = rank > 0 and redis.call('ZRANGE', EXPIRY, rank - 1, rank - 1, 'WITHSCORES') or {}
  redis.call('HSET', META, 'offered', 'e:' .. (before[1] or '-'), 'offeredScore', before[2] or '-inf')
end
`;
