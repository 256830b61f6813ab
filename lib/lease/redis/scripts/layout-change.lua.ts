/**
 * The layout rule of a namespace's contract (guarantee 8), shared by the claim and the renewal: how long until every ID
 * a new layout issues lies above every ID the namespace may have issued, and how a script records a new contract.
 * Lua text spliced into those scripts after the prelude (`now`, `META`, `EXPIRY`, `CONFIG`).
 *
 * A new holder stays above an old one of the same worker ID by the floor and the time rule, both in the frame the IDs
 * carry. Another layout has another frame (epoch, time unit, the bits below the timestamp) or puts worker IDs in
 * other bits, so neither rule compares anything: an epoch moved later, a coarser unit or fewer bits below the
 * timestamp issue IDs among those already issued, on any worker ID. Whatever the layouts, the new IDs lie above the
 * old ones once the new layout's lowest ID exceeds the old layout's highest:
 * - An old holder issued its last timestamp before its lease ended, at most `maxClockOffsetMs + clockBackToleranceMs`
 *   ahead of its server's clock, and that server's clock at most `maxClockOffsetMs` from this one's: at most its
 *   contract's fence margin, which is at least all of that (checked at bootstrap). Its leases ended by the latest
 *   expiry in the expiry set, by the end of the settling that started the current marker (a loss forgets the
 *   expiries; every holder from before it had stopped by then), and after the contract was recorded (`configAt`:
 *   a claim records it before it hands an ID out). `issuedUntil` carries the same bound over from the contracts of
 *   the same layout it replaced (a TTL or clock change, taken at once), and the claim's time rule waits it out too
 *   (claim.script.ts); across a change of layout the bound before it is not needed, since the recorded layout's IDs
 *   lie above every earlier one.
 * - A new holder issues timestamps at most `maxClockOffsetMs` behind its server's clock, which is at most that far
 *   behind this one's; LAYOUT_SPARE_MS more covers the drift of the monotonic clocks its lease runs on.
 * IDs and powers of two multiply exactly in Lua's doubles (a timestamp below 2^53, times 2^k): the comparison is
 * exact.
 *
 * A contract recorded by a new marker (`config` without `configAt`: the meta was lost, and whoever came first wrote
 * theirs) is provisional: nobody issued under it since the loss, and the holders that take their IDs back replace it
 * without a wait, as before. A contract this code cannot read (another writer, a test's made-up string) gives no
 * wait, as for a layout that did not change.
 */
export const LAYOUT_CHANGE = `
local LAYOUT_SPARE_MS = 1000

-- A contract's ID frame, as lease.contract.ts writes it: the bits below the timestamp, the unit, the epoch, the
-- clock bound, the fence margin, and the layout part as text (equal text, same layout).
local function id_frame(contract)
  if not contract then return nil end
  local text = string.match(contract, 'layout=.*$')
  local dc, worker, seq, shard = string.match(contract, 'layout=%d+/(%d+)/(%d+)/(%d+)/?(%d*) ')
  local unit, epoch = string.match(contract, ' unit=(%d+)ms epoch=(%-?%d+)')
  local bound = string.match(contract, 'maxClockOffsetMs=(%d+)')
  local margin = string.match(contract, 'fenceMarginMs=(%d+)')
  if not (text and dc and unit and bound and margin) then return nil end
  return { text = text, unit = tonumber(unit), epoch = tonumber(epoch), bound = tonumber(bound),
    margin = tonumber(margin), shift = tonumber(dc) + tonumber(worker) + tonumber(seq) + (tonumber(shard) or 0) }
end

-- Server ms by which every holder of the recorded layout has issued its last timestamp, as this server's clock runs.
local function issued_until(old)
  local last = tonumber(redis.call('HGET', META, 'created')) + tonumber(redis.call('HGET', META, 'settleMs'))
  local top = redis.call('ZRANGE', EXPIRY, -1, -1, 'WITHSCORES')
  if top[2] then last = math.max(last, tonumber(top[2])) end
  last = math.max(last, tonumber(redis.call('HGET', META, 'configAt') or '0'))
  return math.max(last + old.margin, tonumber(redis.call('HGET', META, 'issuedUntil') or '0'))
end

-- Server ms until this script's layout issues only IDs above every ID the recorded contract's layout may have
-- issued (0 when the layout is the same, the recorded contract provisional, or either unreadable).
local function layout_change_wait(recorded)
  local old, new = id_frame(recorded), id_frame(CONFIG)
  if not old or not new or old.text == new.text or not redis.call('HGET', META, 'configAt') then return 0 end
  local old_above = (math.floor((issued_until(old) - old.epoch) / old.unit) + 1) * 2 ^ old.shift
  local new_ticks = math.ceil(old_above / 2 ^ new.shift)
  local from = new.epoch + new_ticks * new.unit + 2 * new.bound + LAYOUT_SPARE_MS
  -- Capped where a reply's integer still holds it exactly (the refusal needs it to be large, not exact).
  return math.min(math.max(from - now, 0), 2 ^ 53)
end

-- Makes this script's contract the namespace's (after the checks). In place of another: from now on, and, where
-- the layout stays, with the bound of the contracts it replaces carried over. The same one, provisional: from now on.
local function adopt_contract(recorded)
  if recorded == CONFIG then
    if not redis.call('HGET', META, 'configAt') then redis.call('HSET', META, 'configAt', now) end
    return
  end
  local old, new = id_frame(recorded), id_frame(CONFIG)
  if old and new and old.text == new.text and redis.call('HGET', META, 'configAt') then
    redis.call('HSET', META, 'issuedUntil', issued_until(old))
  else
    redis.call('HDEL', META, 'issuedUntil')
  end
  redis.call('HSET', META, 'config', CONFIG, 'configAt', now)
end
`;
