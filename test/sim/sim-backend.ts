import type { LeaseBackend } from '../../lib/lease/lease.backend.js';
import { LeaseConnectionError } from '../../lib/lease/redis/lease.client.js';
import type { LeaseKeys } from '../../lib/lease/lease.keys.js';
import {
  LeaseProtocol,
  type ClaimReply,
  type ClaimRequest,
  type NoteReply,
  type ReleaseReply,
  type RenewReply,
  type RenewRequest,
  type ServerStamp,
} from '../../lib/lease/redis/lease.protocol.js';
import type { LeaseSettings } from '../../lib/lease/lease.settings.js';
import type { ClusterConfirm } from '../../lib/lease/redis/cluster.confirm.js';
import type { SentinelConfirm } from '../../lib/lease/redis/sentinel.confirm.js';
import type { Reply } from './redis-model.js';

export type ScriptName = 'claim' | 'renew' | 'release' | 'note';

/** How a holder's round trips reach the model: through its simulated network, which may delay, drop or cut them. */
export interface SimLink {
  run(script: ScriptName, keys: string[], args: (string | number)[]): Promise<Reply>;
}

/** What a planted bug changes in the replies the coordinator sees (test-only: never part of the library). */
export interface ReplyTamper {
  /** The previous holder's ceiling is forgotten: every claim answers without a floor. */
  dropFloor?: boolean;
  /** The server's time is reported as the holder's own wall clock: the offset check never sees a difference. */
  serverTimeIs?: () => number;
}

/**
 * The lease backend of one simulated process: the same argument building and reply decoding as the Redis backend
 * (LeaseProtocol), over a simulated link to the Redis model. The record key it reports to the process-wide registry
 * carries the process's name, so that simulated processes sharing this one real process keep their own history.
 */
export class SimBackend implements LeaseBackend {
  private readonly protocol: LeaseProtocol;
  private fresh = 0;
  private readonly metaKey: string;

  constructor(
    private readonly link: SimLink,
    settings: LeaseSettings,
    keys: LeaseKeys,
    private readonly processName: string,
    private readonly pid: number,
    private readonly tamper: ReplyTamper = {},
    /** With Sentinels: the real confirmation over simulated Sentinels, and how the connection finds the master again. */
    private readonly sentinel?: { confirm: SentinelConfirm; reconnect: () => void },
    /** Without Sentinels, a Cluster: the real confirmation of claims over the simulated cluster nodes. */
    private readonly cluster?: ClusterConfirm,
  ) {
    this.protocol = new LeaseProtocol(keys, settings);
    this.metaKey = keys.meta;
  }

  connect(): Promise<void> {
    return Promise.resolve();
  }

  async claim(request: Omit<ClaimRequest, 'host' | 'pid'>): Promise<ClaimReply> {
    const args = this.protocol.claimArgs({ ...request, host: this.processName, pid: this.pid });
    const reply = this.stamped(LeaseProtocol.decodeClaim(await this.call('claim', request.candidate, args)));
    if (this.tamper.dropFloor && reply.kind === 'ok') return { ...reply, floorMs: -1 };
    return reply;
  }

  async renew(request: RenewRequest): Promise<RenewReply> {
    const args = this.protocol.renewArgs(request, this.freshToken());
    return this.stamped(LeaseProtocol.decodeRenew(await this.call('renew', request.id, args)));
  }

  async release(id: number, token: string, lastMs: number): Promise<ReleaseReply> {
    const args = this.protocol.releaseArgs(id, token, lastMs, this.freshToken());
    return this.stamped(LeaseProtocol.decodeRelease(await this.call('release', id, args)));
  }

  async note(id: number, lastMs: number): Promise<NoteReply> {
    const args = this.protocol.noteArgs(id, lastMs, this.freshToken());
    return this.stamped(LeaseProtocol.decodeNote(await this.call('note', id, args)));
  }

  /**
   * As RedisLeaseBackend's: the master confirmed by a majority of the Sentinels, else why not (and reconnect); on a
   * Cluster, a claim's primary confirmed by a majority of the primaries.
   */
  async confirm(reply: ServerStamp, what: string): Promise<string | undefined> {
    if (this.sentinel === undefined) {
      if (this.cluster === undefined || what !== 'claim') return undefined;
      const verdict = await this.cluster.confirm(reply.runId, this.metaKey);
      return verdict.kind === 'unconfirmed' ? `the claim is not confirmed: ${verdict.detail}` : undefined;
    }
    const verdict = await this.sentinel.confirm.confirm(reply.runId);
    if (verdict.kind === 'confirmed') return undefined;
    if (verdict.kind === 'replaced' || verdict.elsewhere) this.sentinel.reconnect();
    return `the ${what} is not confirmed by the Sentinels (${verdict.kind})`;
  }

  recordKey(id: number): string {
    return `${this.processName}/${this.protocol.recordKey(id)}`;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private async call(script: ScriptName, id: number, args: (string | number)[]): Promise<unknown[]> {
    const reply = await this.link.run(script, this.protocol.scriptKeys(id), args);
    if (!Array.isArray(reply)) throw new LeaseConnectionError('sim', `${script} failed`, new Error('bad reply'));
    return reply;
  }

  private stamped<T extends ServerStamp>(reply: T): T {
    if (this.tamper.serverTimeIs === undefined) return reply;
    return { ...reply, serverMs: this.tamper.serverTimeIs() };
  }

  private freshToken(): string {
    return `${this.processName}-m${++this.fresh}`;
  }
}
