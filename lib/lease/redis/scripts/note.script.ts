import { PRELUDE, commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type NoteReply = ServerStamp & { kind: 'noted' };

/**
 * Leaves a note of a holder's last issued timestamp on the record (raising the ceiling and `noted`, never lowering
 * them), so that whoever holds the ID next starts above it. A record that vanished with Redis's data is recreated
 * as an expired lease carrying the note.
 *
 * KEYS[1..3] common, KEYS[4] the record.
 * ARGV[1..4] common, ARGV[5] id, ARGV[6] last issued timestamp (holder ms)
 *
 * Reply: {'noted', now, server}
 */
export const NOTE_SCRIPT = `${PRELUDE}
local key, id, last = KEYS[4], ARGV[5], tonumber(ARGV[6])
ensure_marker()
local ceiling = tonumber(redis.call('HGET', key, 'ceiling') or '-1')
local noted = tonumber(redis.call('HGET', key, 'noted') or '-1')
if last > ceiling then redis.call('HSET', key, 'ceiling', last) end
-- Kept apart from the ceiling, which the current holder's release lowers to its own last timestamp.
if last > noted then redis.call('HSET', key, 'noted', last) end
if redis.call('ZSCORE', EXPIRY, id) == false then set_expiry(id, now) end
return {'noted', now, server}
`;

/** The note's arguments after the common four, in the order the Lua names them. */
export function noteArgs(
  settings: CommonSettings,
  id: number,
  lastMs: number,
  freshToken: string,
): (string | number)[] {
  return [...commonArgs(settings, freshToken), id, lastMs];
}

export function decodeNote(reply: unknown[]): NoteReply {
  if (String(reply[0]) === 'noted') return { kind: 'noted', ...stamp(reply, 1) };
  throw unexpected('note', reply);
}
