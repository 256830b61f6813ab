import type { LoggerService } from '@nestjs/common';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { LeaseBackend } from '../lease.backend.js';
import type { LeaseKeys } from '../lease.keys.js';
import type { LeaseSettings } from '../lease.settings.js';
import { ClusterConfirm } from './cluster.confirm.js';
import { checkClusterTiming } from './cluster.timing.js';
import { LeaseClient } from './lease.client.js';
import {
  LeaseProtocol,
  type ClaimReply,
  type ClaimRequest,
  type NoteReply,
  type ReleaseReply,
  type RenewReply,
  type RenewRequest,
  type ServerStamp,
} from './lease.protocol.js';
import { SentinelConfirm } from './sentinel.confirm.js';

/** How late Sentinels may learn of a failover: their hello messages go out every 2 s. */
export const SENTINEL_PROPAGATION_MS = 3000;

/** The lease's scripts on a Redis server (standalone, Sentinel or Cluster), through ioredis. */
export class RedisLeaseBackend implements LeaseBackend {
  private readonly protocol: LeaseProtocol;
  private readonly sentinel: SentinelConfirm | undefined;
  private readonly cluster: ClusterConfirm | undefined;
  /** The logger of the lease's set-up, for what a later round finds about it (once). */
  private logger: LoggerService | undefined;
  private clusterUncheckedTold = false;

  private constructor(
    private readonly client: LeaseClient,
    private readonly settings: LeaseSettings,
    private readonly keys: LeaseKeys,
  ) {
    this.protocol = new LeaseProtocol(keys, settings);
    this.sentinel = settings.confirmWithSentinels
      ? SentinelConfirm.forClient(settings.client, settings.connectTimeoutMs)
      : undefined;
    this.cluster = settings.confirmWithCluster
      ? ClusterConfirm.forClient(settings.client, settings.connectTimeoutMs)
      : undefined;
  }

  static async create(settings: LeaseSettings, keys: LeaseKeys): Promise<RedisLeaseBackend> {
    return new RedisLeaseBackend(await LeaseClient.create(settings), settings, keys);
  }

  async connect(timeoutMs: number): Promise<void> {
    await this.client.whenConnected(timeoutMs);
  }

  async claim(request: Omit<ClaimRequest, 'host' | 'pid'>): Promise<ClaimReply> {
    const args = this.protocol.claimArgs({ ...request, host: hostname(), pid: process.pid });
    const keys = this.protocol.scriptKeys(request.candidate);
    return LeaseProtocol.decodeClaim(await this.client.run('claim', keys, args));
  }

  async renew(request: RenewRequest): Promise<RenewReply> {
    const args = this.protocol.renewArgs(request, randomUUID());
    return LeaseProtocol.decodeRenew(await this.client.run('renew', this.protocol.scriptKeys(request.id), args));
  }

  async release(id: number, token: string, lastMs: number): Promise<ReleaseReply> {
    const args = this.protocol.releaseArgs(id, token, lastMs, randomUUID());
    return LeaseProtocol.decodeRelease(await this.client.run('release', this.protocol.scriptKeys(id), args));
  }

  async note(id: number, lastMs: number): Promise<NoteReply> {
    const args = this.protocol.noteArgs(id, lastMs, randomUUID());
    return LeaseProtocol.decodeNote(await this.client.run('note', this.protocol.scriptKeys(id), args));
  }

  recordKey(id: number): string {
    return this.protocol.recordKey(id);
  }

  async confirm(reply: ServerStamp, what: string): Promise<string | undefined> {
    return (
      (await this.confirmMaster(reply, what)) ??
      (what === 'claim' ? await this.confirmSlotPrimary(reply) : undefined) ??
      (await this.replicasMissing(what))
    );
  }

  /**
   * With a Cluster, whether a majority of the primaries name the process that answered a claim as the primary of
   * the namespace's slot (a paused primary answers what waited in its sockets before it learns it was demoted).
   */
  private async confirmSlotPrimary(reply: ServerStamp): Promise<string | undefined> {
    if (this.cluster === undefined) return undefined;
    const verdict = await this.cluster.confirm(reply.runId, this.keys.meta);
    if (verdict.kind === 'unsupported' && !this.clusterUncheckedTold) {
      this.clusterUncheckedTold = true;
      this.logger?.warn(
        `The Redis Cluster refuses the claim's confirmation (${verdict.detail}): claims are not checked against ` +
          `the cluster's view of the namespace's primary, so a primary paused past its replica's promotion may hand ` +
          'out, when it runs again, a worker ID the promoted node handed out. Allow CLUSTER NODES, CLUSTER KEYSLOT ' +
          'and INFO to the lease (+cluster|nodes +cluster|keyslot +info in its ACL, or ask the provider).',
      );
    }
    return verdict.kind === 'unconfirmed' ? `the claim is not confirmed: ${verdict.detail}` : undefined;
  }

  /**
   * With Sentinel, whether a majority of the Sentinels name the process that answered as the master. When they
   * name another one (or some do, a failover may be under way) the client reconnects, so that it finds the master
   * the Sentinels name.
   */
  private async confirmMaster(reply: ServerStamp, what: string): Promise<string | undefined> {
    if (this.sentinel === undefined) return undefined;
    const verdict = await this.sentinel.confirm(reply.runId);
    if (verdict.kind === 'confirmed') return undefined;
    if (verdict.kind === 'replaced') {
      this.client.reconnect();
      return (
        `the Sentinels of "${this.sentinel.masterName}" name another master (${verdict.masterRunId}) than the ` +
        `Redis process that answered the ${what} (${reply.runId}); reconnecting`
      );
    }
    if (verdict.elsewhere) this.client.reconnect();
    return `the ${what} is not confirmed: ${verdict.detail}`;
  }

  /** With `waitForReplicas`: undefined once enough replicas acknowledged the writes so far, else why not. */
  private async replicasMissing(what: string): Promise<string | undefined> {
    const wanted = this.settings.waitForReplicas;
    if (wanted === 0) return undefined;
    const acked = await this.client.waitForReplicas(wanted, this.settings.waitForReplicasTimeoutMs);
    return acked >= wanted ? undefined : `only ${acked} of ${wanted} replicas acknowledged the ${what}`;
  }

  /**
   * Says at bootstrap where the set-up falls short: with a Cluster, a node timeout too long for the lease's
   * promotion window; with Sentinel, what the split-brain guarantee needs from the Sentinels.
   */
  async checkSetup(logger: LoggerService): Promise<void> {
    await checkClusterTiming(this.settings.client, this.settings, logger);
    this.logger = logger;
    const sentinel = this.sentinel;
    if (sentinel === undefined) return;
    const setup = await sentinel.setup();
    const majority = Math.floor(setup.sentinels / 2) + 1;
    if (setup.reachable < majority) {
      logger.warn(
        `Only ${setup.reachable} of ${setup.sentinels} Sentinels of "${sentinel.masterName}" answered: renewals are ` +
          `confirmed only while a majority (${majority}) does, so the lease fences itself until they answer.`,
      );
    }
    if (setup.quorum !== null && setup.quorum < majority) {
      logger.warn(
        `The Sentinel quorum of "${sentinel.masterName}" is ${setup.quorum}, below a majority of its ` +
          `${setup.sentinels} Sentinels: set it to ${majority} or more, so that a minority cannot start a failover.`,
      );
    }
    if (this.settings.fenceMarginMs < SENTINEL_PROPAGATION_MS) {
      logger.warn(
        `redis.fenceMarginMs (${this.settings.fenceMarginMs} ms) is below ${SENTINEL_PROPAGATION_MS} ms: Sentinels ` +
          'learn of a failover through hello messages every 2 s, and a renewal confirmed by a Sentinel that has not ' +
          'heard yet must fence before the promoted side settles. Raise redis.fenceMarginMs (and redis.ttlMs).',
      );
    }
  }

  async close(): Promise<void> {
    this.sentinel?.close();
    await this.client.close();
  }
}
