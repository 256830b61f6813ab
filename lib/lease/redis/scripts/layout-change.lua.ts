/**
 * The claim script's part for a namespace that takes another layout (see claim.script.ts): how long until every ID
 * the new layout issues lies above every ID the namespace's recorded contract may have issued. Lua text spliced into
 * the claim script after the prelude (`now`, `META`, `EXPIRY`, `CONFIG`).
 *
 * A new holder stays above an old one of the same worker ID by the floor and the time rule, both in the frame the IDs
 * carry. Another layout has another frame (epoch, time unit, the bits below the timestamp) or puts worker IDs in
 * other bits, so neither rule compares anything: an epoch moved later, a coarser unit or fewer bits below the
 * timestamp issue IDs among those already issued, on any worker ID. Whatever the layouts, the new IDs are above the
 * old ones once the new layout's lowest ID exceeds the old layout's highest: the lowest a new holder can issue is
 * its timestamp of (server now - 2 × its clock bound) shifted by its bits, the highest an old holder issued lies
 * below its timestamp of (its last lease's end + 2 × its clock bound) + 1, shifted by its bits. Each bound counts
 * twice, for the holder's wall clock against the server's and for the servers' clocks against each other (a
 * failover between the two), and LAYOUT_SPARE_MS more covers the drift of the monotonic clocks a holder fences by.
 *
 * The old holders' last lease ended at the latest expiry in the expiry set, or at the end of the settling that
 * started the current marker (a loss forgets the expiries; every holder from before it had stopped by then). IDs and
 * powers of two multiply exactly in Lua's doubles (a timestamp below 2^53, times 2^k), so the comparison is exact.
 *
 * A contract this code cannot read (another writer, a test's made-up string) gives 0: no wait, as for a layout that
 * did not change.
 */
export const LAYOUT_CHANGE = `
local LAYOUT_SPARE_MS = 1000

-- A contract's ID frame, as lease.contract.ts writes it: the bits below the timestamp, the unit, the epoch, the
-- clock bound, and the layout part as text (equal text, same layout).
local function id_frame(contract)
  local text = string.match(contract, 'layout=.*$')
  local dc, worker, seq, shard = string.match(contract, 'layout=%d+/(%d+)/(%d+)/(%d+)/?(%d*) ')
  local unit, epoch = string.match(contract, ' unit=(%d+)ms epoch=(%-?%d+)')
  local bound = string.match(contract, 'maxClockOffsetMs=(%d+)')
  if not (text and dc and unit and bound) then return nil end
  return { text = text, unit = tonumber(unit), epoch = tonumber(epoch), bound = tonumber(bound),
    shift = tonumber(dc) + tonumber(worker) + tonumber(seq) + (tonumber(shard) or 0) }
end

-- Server ms until this claim's layout issues only IDs above every ID the recorded contract may have issued.
local function layout_change_wait(recorded)
  local old, new = id_frame(recorded), id_frame(CONFIG)
  if not old or not new or old.text == new.text then return 0 end
  local last = tonumber(redis.call('HGET', META, 'created')) + tonumber(redis.call('HGET', META, 'settleMs'))
  local top = redis.call('ZRANGE', EXPIRY, -1, -1, 'WITHSCORES')
  if top[2] then last = math.max(last, tonumber(top[2])) end
  local old_above = (math.floor((last + 2 * old.bound - old.epoch) / old.unit) + 1) * 2 ^ old.shift
  local new_ticks = math.ceil(old_above / 2 ^ new.shift)
  local from = new.epoch + new_ticks * new.unit + 2 * new.bound + LAYOUT_SPARE_MS
  return math.max(from - now, 0)
end
`;
