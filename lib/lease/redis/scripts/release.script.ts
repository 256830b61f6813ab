import { PRELUDE, commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type ReleaseReply = ServerStamp & { kind: 'released' | 'not-owner' };

/**
 * Gives a lease back: records the holder's exact last issued timestamp as the ceiling, so the next holder may
 * start right after it, and marks the ID expired now. A note a lost holder left (`noted`) stays: the next holder's
 * floor is the higher of the two.
 *
 * KEYS[1..3] common, KEYS[4] the record.
 * ARGV[1..4] common, ARGV[5] id, ARGV[6] token, ARGV[7] last issued timestamp (holder ms)
 *
 * Reply: {'released', now, server} | {'not-owner', now, server}
 */
export const RELEASE_SCRIPT = `${PRELUDE}
local key, id, token, last = KEYS[4], ARGV[5], ARGV[6], ARGV[7]
ensure_marker()
if redis.call('HGET', key, 'token') ~= token then return {'not-owner', now, server} end
redis.call('HSET', key, 'ceiling', last)
redis.call('HDEL', key, 'token')
set_expiry(id, now)
return {'released', now, server}
`;

/** The release's arguments after the common four, in the order the Lua names them. */
export function releaseArgs(
  settings: CommonSettings,
  id: number,
  token: string,
  lastMs: number,
  freshToken: string,
): (string | number)[] {
  return [...commonArgs(settings, freshToken), id, token, lastMs];
}

export function decodeRelease(reply: unknown[]): ReleaseReply {
  const status = String(reply[0]);
  if (status === 'released' || status === 'not-owner') return { kind: status, ...stamp(reply, 1) };
  throw unexpected('release', reply);
}
