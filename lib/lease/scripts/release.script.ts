import { PRELUDE, commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type ReleaseReply = ServerStamp & { kind: 'released' | 'not-owner' };

/**
 * Gives a lease back: records the holder's exact last issued timestamp as the ceiling, so the next holder may
 * start right after it, and marks the ID expired now. A note a lost holder left (`noted`) stays: the next holder's
 * floor is the higher of the two.
 *
 * ARGV[1..4] common, ARGV[5] record key, ARGV[6] id, ARGV[7] token, ARGV[8] last issued timestamp (holder ms)
 *
 * Reply: {'released', now, server} | {'not-owner', now, server}
 */
export const RELEASE_SCRIPT = `${PRELUDE}
local key, id, token, last = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
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
  recordKey: string,
  id: number,
  token: string,
  lastMs: number,
  freshToken: string,
): (string | number)[] {
  return [...commonArgs(settings, freshToken), recordKey, id, token, lastMs];
}

export function decodeRelease(reply: unknown[]): ReleaseReply {
  const status = String(reply[0]);
  if (status === 'released' || status === 'not-owner') return { kind: status, ...stamp(reply, 1) };
  throw unexpected('release', reply);
}
