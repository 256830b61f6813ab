// The claim script's (`claim.script.ts`) request and reply: its arguments in the order its Lua reads them, and the
// decoder of its answers.
import { commonArgs, stamp, unexpected, type CommonSettings, type ServerStamp } from './prelude.lua.js';

export type ClaimReply = ServerStamp &
  (
    | { kind: 'ok'; id: number; floorMs: number; marker: string; expiry: number; held: number }
    | { kind: 'settling'; waitMs: number }
    /** A free ID's record is gone and its last holder may have issued until `waitMs` ago: claim again then. */
    | { kind: 'wait'; waitMs: number }
    /** The ID the claim named is not the one to hand out now: claim again naming `candidate`. */
    | { kind: 'retry'; candidate: number }
    /** `soonestExpiry`: when the first live lease lapses, server ms (-1 when none is live). */
    | { kind: 'exhausted'; held: number; soonestExpiry: number }
    /** `heldBack`: IDs held back for the holders that lost them in a data loss, under `recorded` (see the renewal). */
    | { kind: 'mismatch'; recorded: string; live: number; heldBack: number }
    /** The namespace issued IDs under another layout, and this one's lie above them only in `waitMs` (wait, or refuse). */
    | { kind: 'layout'; recorded: string; waitMs: number }
    | { kind: 'busy' }
  );

export interface ClaimRequest {
  token: string;
  holderNowMs: number;
  host: string;
  pid: number;
  excluded: readonly number[];
  /** The ID whose record the call declares (KEYS[4]): the one the last reply named, or a guess. */
  candidate: number;
  /**
   * The ID this instance lost while the namespace settled and the token it held it by: if the ID is still reserved
   * for that token (see the renewal), the claim is handed that ID first.
   */
  prior?: { id: number; token: string };
  /**
   * Set only when `candidate` is the one the last reply (`retry`) named: a number in [0, 2^31) from the lease's
   * injected random source. If that candidate was taken in between (contention), the script answers with a free ID
   * this number picks among the SPREAD next ones, instead of the one every contender is sent to.
   */
  spread?: number;
}

/** The claim's arguments after the common four, in the order the Lua names them. */
export function claimArgs(settings: CommonSettings & { idCount: number }, request: ClaimRequest): (string | number)[] {
  return [
    ...commonArgs(settings, request.token),
    request.token,
    settings.idCount,
    request.holderNowMs,
    request.host,
    request.pid,
    request.excluded.join(','),
    request.candidate,
    request.spread ?? -1,
    request.prior?.id ?? '',
    request.prior?.token ?? '',
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
    case 'wait':
      return { kind: 'wait', waitMs: Number(reply[1]), ...stamp(reply, 2) };
    case 'retry':
      return { kind: 'retry', candidate: Number(reply[1]), ...stamp(reply, 2) };
    case 'exhausted':
      return { kind: 'exhausted', held: Number(reply[1]), soonestExpiry: Number(reply[2]), ...stamp(reply, 3) };
    case 'mismatch':
      return {
        kind: 'mismatch',
        recorded: String(reply[1]),
        live: Number(reply[2]),
        heldBack: Number(reply[3]),
        ...stamp(reply, 4),
      };
    case 'layout':
      return { kind: 'layout', recorded: String(reply[1]), waitMs: Number(reply[2]), ...stamp(reply, 3) };
    case 'busy':
      return { kind: 'busy', ...stamp(reply, 1) };
    default:
      throw unexpected('claim', reply);
  }
}
