import { PRELUDE, commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type RenewReply = ServerStamp &
  ({ kind: 'ok' | 'recovered'; expiry: number; marker: string; held: number } | { kind: 'lost'; reason: string });

export interface RenewRequest {
  id: number;
  token: string;
  ceilingMs: number;
  marker: string;
  /** The previous lease's expiry, server ms: the proof, after a data loss, that it had not lapsed. */
  previousExpiry: number;
  /** How far ahead of the server's time that expiry must still lie. */
  marginMs: number;
}

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
 * A renewal that holds on answers with the number of live leases (`held`, one ZCOUNT against the server's time), so
 * that every holder sees the namespace's capacity at each renewal for the cost of one O(log N) command.
 *
 * Reply: {'ok', expiry, marker, held, now, run_id} | {'recovered', expiry, marker, held, now, run_id}
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
  return {'recovered', expiry, marker, live_count(), now, server}
end
-- The namespace took another configuration while this holder was paused past its lease: it must not go on.
if redis.call('HGET', META, 'config') ~= CONFIG then return {'lost', 'config', now, server} end
local owner = redis.call('HGET', key, 'token')
if owner ~= token then return {'lost', owner and 'taken' or 'missing', now, server} end
local ceiling = math.max(tonumber(redis.call('HGET', key, 'ceiling') or '0'), wanted_ceiling)
redis.call('HSET', key, 'ceiling', ceiling)
set_expiry(id, expiry)
return {'ok', expiry, marker, live_count(), now, server}
`;

/** The renewal's arguments after the common three, in the order the Lua names them. */
export function renewArgs(
  settings: CommonSettings,
  recordKey: string,
  request: RenewRequest,
  freshToken: string,
): (string | number)[] {
  return [
    ...commonArgs(settings, freshToken),
    recordKey,
    request.id,
    request.token,
    request.ceilingMs,
    request.marker,
    request.previousExpiry,
    request.marginMs,
  ];
}

export function decodeRenew(reply: unknown[]): RenewReply {
  const status = String(reply[0]);
  if (status === 'ok' || status === 'recovered') {
    return {
      kind: status,
      expiry: Number(reply[1]),
      marker: String(reply[2]),
      held: Number(reply[3]),
      ...stamp(reply, 4),
    };
  }
  if (status === 'lost') return { kind: 'lost', reason: String(reply[1]), ...stamp(reply, 2) };
  throw unexpected('renew', reply);
}
