import { LAYOUT_CHANGE } from './layout-change.lua.js';
import { PRELUDE, commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type RenewReply = ServerStamp &
  (
    | { kind: 'ok'; expiry: number; marker: string; held: number }
    | { kind: 'recovered'; expiry: number; marker: string; held: number; intact?: boolean }
    | { kind: 'lost'; reason: string }
  );

export interface RenewRequest {
  id: number;
  token: string;
  ceilingMs: number;
  marker: string;
  /** The previous lease's expiry, server ms: the proof, after a data loss, that it had not lapsed. */
  previousExpiry: number;
  /** How far ahead of the server's time that expiry must still lie. */
  marginMs: number;
  /**
   * The revisions the record may show: the one of the last renewal the holder saw answered, and the one it sent
   * last (its reply may have been lost after the script ran).
   */
  knownRevs: readonly number[];
  /** The revision this renewal writes: the lease's own counter, one above the last it sent. */
  rev: number;
}

/**
 * Renews a lease and raises its ceiling, while the token still owns the ID under the marker the holder claimed
 * under and the namespace runs the holder's contract.
 *
 * When the marker changed (Redis lost its data, restarted from a snapshot, failed over, or lost some keys), the
 * holder takes its ID back into the new data, but only with proof that its lease had not lapsed when this request
 * arrived: the previous lease's expiry (server ms, from the last confirmed renewal) must lie more than a margin
 * ahead of this server's time, the namespace must still be settling (no ID has been handed out since the loss), and
 * no other holder may have taken the ID back under the new marker. A holder paused past its lease fails the first
 * test even when its request was written before the pause. Taking it back restores the record's ceiling. Holders
 * that take their IDs back decide the namespace's contract: one recorded after the loss by a script that holds
 * nothing (an instance that merely tried to claim) gives way to theirs.
 *
 * Under an unchanged marker, two findings are a loss the marker did not show, and start a new one:
 * - the record shows another revision than the holder last wrote (each renewal writes the lease's next revision; a
 *   reply lost after the script ran leaves the one sent, which the holder also accepts, and a request run twice
 *   leaves its own): the data was rolled back in the same process (a reload, a restore), which keeps the `run_id` and
 *   the replication ID;
 * - another token owns the record while this lease cannot have lapsed: only a rollback hands out a live lease;
 *   this holder stops (the other one issues under the ID now) and is told `rollback`.
 * And a marker that differs from the holder's and has settled, while the lease has not lapsed, is older than the one
 * the holder renewed under less than a TTL ago: the data was rolled back to before a marker change. A new marker
 * starts (cause `rollback`) and the holder takes its ID back.
 * A record that is merely gone (deleted, evicted) while the expiry set still carries this holder's own last expiry
 * is written again: nobody claimed the ID since, so the holder keeps it and the namespace does not settle.
 *
 * KEYS[1..3] common, KEYS[4] the record.
 * ARGV[1..4] common, ARGV[5] id, ARGV[6] token, ARGV[7] new ceiling (holder ms), ARGV[8] the holder's marker,
 * ARGV[9] the previous lease's expiry (server ms), ARGV[10] the margin of that test (ms), ARGV[11] the revisions the
 * record may show (comma-separated), ARGV[12] the revision this renewal writes
 *
 * A renewal that holds on answers with the number of live leases (`held`, one ZCOUNT against the server's time), so
 * that every holder sees the namespace's capacity at each renewal for the cost of one O(log N) command.
 *
 * A holder whose proof fails while the namespace still settles is told `lost`, and its ID is reserved for it (the
 * meta's `reserved` entry, by token) until one TTL after settling ends: its next claim, naming the ID and the token,
 * is handed that ID first, and every other claim passes it over (see the claim). A holder that learns of its loss
 * only after settling reserves nothing: other instances may hold its ID by then.
 *
 * A holder that takes its ID back learns whether nothing of its lease was lost (`intact`: the marker changed only
 * because another Redis process serves the namespace, and the record still shows this holder's last renewal).
 *
 * Reply: {'ok', expiry, marker, held, now, server} | {'recovered', expiry, marker, held, intact 0|1, now, server}
 *      | {'lost', reason, now, server}
 */
export const RENEW_SCRIPT = `${PRELUDE}${LAYOUT_CHANGE}
local key, id, token = KEYS[4], ARGV[5], ARGV[6]
local wanted_ceiling, held_marker = tonumber(ARGV[7]), ARGV[8]
local previous_expiry, proof_margin, known_revs, rev = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11], ARGV[12]
-- The revisions the holder knew of when it sent this request.
local function known_before(value)
  for candidate in string.gmatch(known_revs, '[^,]+') do
    if candidate == value then return true end
  end
  return false
end
-- The revision this renewal writes is known too: a record that shows it under this token was written by this very
-- request, run once already (a client that re-sends a command left unanswered when its connection dropped).
local function known(value)
  return value == rev or known_before(value)
end
local marker = ensure_marker()
local exists = redis.call('EXISTS', key) == 1
local owner = redis.call('HGET', key, 'token')
local unlapsed = now + proof_margin < previous_expiry
-- Another marker, settled already, while this lease has not lapsed: this holder renewed under its own marker less
-- than a TTL ago, and the current one was created more than the settling (longer than any TTL) ago, so it is older
-- than what this holder saw. Only a rollback brings an older marker back (a reload or restore in the same process,
-- to before a partial loss started the holder's marker): the namespace settles again, as for any rollback.
-- But an ID another holder took under the current marker and holds now is that holder's, whatever brought the old
-- marker to this holder (a primary that answered it while paused past a promotion): this holder stops.
if marker ~= held_marker and unlapsed and settling_left() == 0 then
  if owner and owner ~= token and redis.call('HGET', key, 'marker') == marker
    and tonumber(redis.call('ZSCORE', EXPIRY, id) or '-1') > now then
    return {'lost', 'taken', now, server}
  end
  marker = new_marker('rollback')
end
if marker == held_marker then
  if not exists then
    local entry = tonumber(redis.call('ZSCORE', EXPIRY, id) or '-1')
    if entry ~= previous_expiry then
      -- The record gone and its expiry gone or older while this lease has not lapsed: the data is older than this
      -- holder's last claim or renewal (a rollback to before it claimed the ID). The namespace settles, as for any
      -- rollback, so that the claim this holder sends next cannot be handed a live holder's rolled-back ID. A later
      -- expiry is another holder's claim since, or a renewal of this holder's whose answer it never had, the record
      -- evicted since either way: nothing was rolled back, and the holder only claims again.
      if unlapsed and entry < previous_expiry then new_marker('rollback') end
      return {'lost', 'missing', now, server}
    end
  elseif owner == token and not known(redis.call('HGET', key, 'rev') or '') then
    -- A higher revision of this holder's own: a later renewal of it ran already, so this one is a re-run the holder
    -- gave up on before it sent that one (re-sent after a reconnect, behind it), and nobody awaits its answer. It
    -- changes nothing; a rollback only ever brings back lower revisions.
    if (tonumber(redis.call('HGET', key, 'rev')) or -1) > tonumber(rev) then
      return {'lost', 'stale', now, server}
    end
    marker = new_marker('rollback')
  elseif owner ~= token and unlapsed then
    new_marker('rollback')
    return {'lost', 'rollback', now, server}
  end
end
local expiry = now + TTL
if marker ~= held_marker then
  if not unlapsed then
    -- Lost while the namespace settles, and nobody took the ID back under the new marker: the ID is held back for
    -- this holder's next claim until one TTL after settling ends, so that an instance that was serving gets an ID
    -- ahead of instances that never booted. Only the order of claims changes; the claim's rules decide safety.
    local recorded = redis.call('HGET', META, 'config')
    -- Nothing is held back for a holder whose layout the namespace's recorded one (kept through the change) would
    -- have to wait for: it claims like any other instance, under the claim's layout rule.
    if settling_left() > 0 and not (owner and owner ~= token and redis.call('HGET', key, 'marker') == marker)
      and (recorded == CONFIG or layout_change_wait(recorded) == 0) then
      reserve(id, token)
      -- The contract this holder ran under stands for the IDs held back: until a holder takes its ID back and
      -- confirms one, a claim with another contract is refused while they are (claim script), so that an instance
      -- that only tried to claim does not set the namespace's contract ahead of the fleet that lost its IDs.
      if redis.call('HGET', META, 'confirmed') ~= '1' then adopt_contract(recorded) end
    end
    return {'lost', 'marker', now, server}
  end
  if settling_left() == 0 then return {'lost', 'marker', now, server} end
  if owner and owner ~= token and redis.call('HGET', key, 'marker') == marker then
    return {'lost', 'taken', now, server}
  end
  local recorded = redis.call('HGET', META, 'config')
  if recorded ~= CONFIG then
    if recorded and redis.call('HGET', META, 'confirmed') == '1' then return {'lost', 'config', now, server} end
    if layout_change_wait(recorded) > 0 then return {'lost', 'config', now, server} end
  end
  adopt_contract(recorded)
  redis.call('HSET', META, 'confirmed', 1)
  -- Nothing of this lease was lost when only the serving process changed and the record still shows this holder's
  -- last renewal: the holder may say so, rather than that Redis may have lost data.
  -- (Not its own revision: a re-run of a renewal that recovered already would answer for the first run's finding.)
  local intact = redis.call('HGET', META, 'cause') == 'server' and owner == token
    and known_before(redis.call('HGET', key, 'rev') or '')
  local ceiling = math.max(floor_of(key), wanted_ceiling)
  redis.call('HSET', key, 'token', token, 'marker', marker, 'ceiling', ceiling, 'claimed', now, 'rev', rev)
  set_expiry(id, expiry)
  return {'recovered', expiry, marker, live_count(), intact and 1 or 0, now, server}
end
-- The namespace took another contract while this holder was paused past its lease: it must not go on.
if redis.call('HGET', META, 'config') ~= CONFIG then return {'lost', 'config', now, server} end
if exists and owner ~= token then return {'lost', owner and 'taken' or 'missing', now, server} end
-- A lease that lapsed on this server is over, even though nobody took its ID here: a primary paused (SIGSTOP, a VM
-- pause) past its replica's promotion answers from its old data, with this holder's token still on the record, while
-- the promoted node may have handed the ID out. The holder claims again (its record's ceiling is its floor).
-- The server's own expiry counts too: a renewal it ran whose answer the holder never had (lost, or unconfirmed)
-- extended the lease without the holder knowing.
if math.max(previous_expiry, tonumber(redis.call('ZSCORE', EXPIRY, id) or '-1')) <= now then
  return {'lost', 'lapsed', now, server}
end
local ceiling = math.max(tonumber(redis.call('HGET', key, 'ceiling') or '0'), wanted_ceiling)
redis.call('HSET', key, 'token', token, 'marker', marker, 'ceiling', ceiling, 'rev', rev)
set_expiry(id, expiry)
return {'ok', expiry, marker, live_count(), now, server}
`;

/** The renewal's arguments after the common four, in the order the Lua names them. */
export function renewArgs(settings: CommonSettings, request: RenewRequest, freshToken: string): (string | number)[] {
  return [
    ...commonArgs(settings, freshToken),
    request.id,
    request.token,
    request.ceilingMs,
    request.marker,
    request.previousExpiry,
    request.marginMs,
    request.knownRevs.join(','),
    request.rev,
  ];
}

export function decodeRenew(reply: unknown[]): RenewReply {
  const status = String(reply[0]);
  const common = () => ({ expiry: Number(reply[1]), marker: String(reply[2]), held: Number(reply[3]) });
  if (status === 'ok') return { kind: 'ok', ...common(), ...stamp(reply, 4) };
  if (status === 'recovered') {
    return { kind: 'recovered', ...common(), intact: Number(reply[4]) === 1, ...stamp(reply, 5) };
  }
  if (status === 'lost') return { kind: 'lost', reason: String(reply[1]), ...stamp(reply, 2) };
  throw unexpected('renew', reply);
}
