import type { LeaseKeys } from './lease.keys.js';
import type { LeaseSettings } from './lease.settings.js';

/** Where every reply ends: the server's time and the Redis process that ran the script. */
export interface ServerStamp {
  /** Redis server time (`TIME`), ms. */
  serverMs: number;
  /** The Redis process's `run_id`: Sentinel names the master by it. */
  runId: string;
}

export type ClaimReply = ServerStamp &
  (
    | { kind: 'ok'; id: number; floorMs: number; marker: string; expiry: number }
    | { kind: 'settling'; waitMs: number }
    | { kind: 'exhausted'; held: number }
    | { kind: 'mismatch'; recorded: string; live: number }
    | { kind: 'busy' }
  );

export type RenewReply = ServerStamp &
  ({ kind: 'ok' | 'recovered'; expiry: number; marker: string } | { kind: 'lost'; reason: string });

export type ReleaseReply = ServerStamp & { kind: 'released' | 'not-owner' };

export type NoteReply = ServerStamp & { kind: 'noted' };

export interface ClaimRequest {
  token: string;
  holderNowMs: number;
  host: string;
  pid: number;
  excluded: readonly number[];
}

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
 * The arguments of each script in their order, and the decoders of their replies, in one place: nothing else
 * indexes a reply array. (The Lua, with the same order on its first lines, is in lease.scripts.ts.)
 */
export class LeaseProtocol {
  constructor(
    private readonly keys: LeaseKeys,
    private readonly settings: Pick<LeaseSettings, 'ttlMs' | 'config' | 'idCount'>,
  ) {}

  get scriptKeys(): string[] {
    return [this.keys.meta, this.keys.cursor, this.keys.expiry];
  }

  recordKey(id: number): string {
    return this.keys.recordPrefix + id;
  }

  /** ARGV[1..3] of every script: ttl, configuration, a fresh token for a marker the call may create. */
  common(freshToken: string): (string | number)[] {
    return [this.settings.ttlMs, this.settings.config, freshToken];
  }

  claimArgs(request: ClaimRequest): (string | number)[] {
    return [
      ...this.common(request.token),
      this.keys.recordPrefix,
      request.token,
      this.settings.idCount,
      request.holderNowMs,
      request.host,
      request.pid,
      request.excluded.join(','),
    ];
  }

  renewArgs(request: RenewRequest, freshToken: string): (string | number)[] {
    return [
      ...this.common(freshToken),
      this.recordKey(request.id),
      request.id,
      request.token,
      request.ceilingMs,
      request.marker,
      request.previousExpiry,
      request.marginMs,
    ];
  }

  releaseArgs(id: number, token: string, lastMs: number, freshToken: string): (string | number)[] {
    return [...this.common(freshToken), this.recordKey(id), id, token, lastMs];
  }

  noteArgs(id: number, lastMs: number, freshToken: string): (string | number)[] {
    return [...this.common(freshToken), this.recordKey(id), id, lastMs];
  }

  static decodeClaim(reply: unknown[]): ClaimReply {
    const status = String(reply[0]);
    switch (status) {
      case 'ok':
        return {
          kind: 'ok',
          id: Number(reply[1]),
          floorMs: Number(reply[2]),
          marker: String(reply[3]),
          expiry: Number(reply[4]),
          ...stamp(reply, 5),
        };
      case 'settling':
        return { kind: 'settling', waitMs: Number(reply[1]), ...stamp(reply, 2) };
      case 'exhausted':
        return { kind: 'exhausted', held: Number(reply[1]), ...stamp(reply, 2) };
      case 'mismatch':
        return { kind: 'mismatch', recorded: String(reply[1]), live: Number(reply[2]), ...stamp(reply, 3) };
      case 'busy':
        return { kind: 'busy', ...stamp(reply, 1) };
      default:
        throw unexpected('claim', reply);
    }
  }

  static decodeRenew(reply: unknown[]): RenewReply {
    const status = String(reply[0]);
    if (status === 'ok' || status === 'recovered') {
      return { kind: status, expiry: Number(reply[1]), marker: String(reply[2]), ...stamp(reply, 3) };
    }
    if (status === 'lost') return { kind: 'lost', reason: String(reply[1]), ...stamp(reply, 2) };
    throw unexpected('renew', reply);
  }

  static decodeRelease(reply: unknown[]): ReleaseReply {
    const status = String(reply[0]);
    if (status === 'released' || status === 'not-owner') return { kind: status, ...stamp(reply, 1) };
    throw unexpected('release', reply);
  }

  static decodeNote(reply: unknown[]): NoteReply {
    if (String(reply[0]) === 'noted') return { kind: 'noted', ...stamp(reply, 1) };
    throw unexpected('note', reply);
  }
}

function stamp(reply: unknown[], at: number): ServerStamp {
  return { serverMs: Number(reply[at]), runId: String(reply[at + 1]) };
}

function unexpected(script: string, reply: unknown[]): Error {
  return new Error(`unexpected ${script} reply ${JSON.stringify(reply)}`);
}
