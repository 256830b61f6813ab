import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { monotonicNow } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import type { IssuePermit } from '../core/permit.js';
import type { LeaseStatus, WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../worker/worker-source.js';
import { countLease, noteOwnHighWaterMs, ownHighWaterMs, trackHeld } from '../worker/process-workers.js';
import { LeaseClient } from './lease.client.js';
import {
  ClockOutOfSyncError,
  LeaseConfigMismatchError,
  LeaseExhaustedError,
  RedisUnavailableError,
} from './lease.errors.js';
import { leaseKeys, type LeaseKeys } from './lease.keys.js';
import { LeaseProtocol, type ClaimReply, type ServerStamp } from './lease.protocol.js';
import type { LeaseSettings } from './lease.settings.js';
import { SentinelConfirm } from './sentinel.confirm.js';
import { ServerClock } from './server-clock.js';

/** A lease this process holds. Times named `…Ms` are the holder's ID-time (the generator's clock). */
interface HeldLease {
  id: number;
  token: string;
  marker: string;
  workerId: number;
  datacenterId: number;
  floorMs: number | null;
  ceilingMs: number;
  /** The ceiling in layout ticks, what the permit hands the generator. */
  ceilingTicks: number;
  /** Monotonic ms at which the holder stops issuing unless a renewal succeeds first. */
  fenceAt: number;
  /** Redis server ms at which the lease lapses. */
  serverExpiry: number;
  /** Ends the process-wide tracking of this ID, keeping the last timestamp as the process's own mark. */
  untrack: (finalMs: number) => void;
}

/**
 * How a lease was given back: released by its token, or, when the record was no longer ours, left with a note of
 * our last timestamp. `lastMs` is the timestamp written on the record (holder ms, -1 when nothing was issued).
 */
interface ReleaseOutcome {
  kind: 'released' | 'noted';
  lastMs: number;
}

/**
 * The Redis worker-ID lease: claims an ID before the app serves, renews it on an unref'd timer, fences itself when
 * renewals stop, re-claims after a loss, switches ID when the clock steps back too far, and releases on shutdown.
 * The invariants it keeps (exclusive, ceiling, floor, self-fencing, loss, data loss) are described in the README.
 */
export class RedisWorkerSource implements WorkerIdSource {
  readonly kind = 'redis' as const;
  private readonly keys: LeaseKeys;
  private readonly protocol: LeaseProtocol;
  private readonly serverClock: ServerClock;
  private client: LeaseClient | undefined;
  private sentinel: SentinelConfirm | undefined;
  /** Monotonic ms at which the namespace's settling ends, while a claim waits for it. */
  private settlingUntil: number | null = null;
  private uncount: (() => void) | undefined;
  private context: WorkerSourceContext | undefined;
  private lease: HeldLease | undefined;
  private state: LeaseStatus['state'] = 'idle';
  private renewTimer: NodeJS.Timeout | undefined;
  private renewalFailures = 0;
  private lastRenewalAt: number | null = null;
  private lastError: string | null = null;
  private switches = 0;
  private renewing = false;
  private lastEarlyRenewal = -Infinity;
  private stopped = false;
  /** Lease operations run one at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  private readyWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  /** Pending back-off sleeps: shutdown ends them at once, so that no timer of the lease outlives the app. */
  private readonly sleeps = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private readonly permit: IssuePermit = {
    ceiling: (nowMs) => this.currentCeiling(nowMs),
    ceilingReached: () => this.renewEarly(),
  };

  constructor(
    private readonly settings: LeaseSettings,
    private readonly fixedDatacenterId: number,
  ) {
    this.keys = leaseKeys(settings, fixedDatacenterId);
    this.protocol = new LeaseProtocol(this.keys, settings);
    this.serverClock = new ServerClock(settings.maxClockOffsetMs, settings.ttlMs);
  }

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    this.context = context;
    this.state = 'claiming';
    const started = monotonicNow();
    this.client = await LeaseClient.create(this.settings);
    if (this.settings.confirmWithSentinels) {
      this.sentinel = SentinelConfirm.forClient(this.settings.client, this.settings.connectTimeoutMs);
    }
    const count = countLease(this.keys.meta);
    this.uncount = count.done;
    if (count.running > 1) {
      context.logger.warn(
        `This process now runs ${count.running} Redis leases in namespace "${this.settings.namespace}", one per ` +
          'SnowflakeModule registration, and holds as many worker IDs. Import SnowflakeModule.forRoot() once, with ' +
          '`isGlobal: true`, and inject IdService wherever it is needed.',
      );
    }
    try {
      await this.client.whenConnected(this.settings.connectTimeoutMs);
      if (this.sentinel !== undefined) await this.checkSentinels(this.sentinel);
      const assignment = await this.claim([], this.settings.bootstrapAttempts);
      context.logger.log(
        `Claimed worker ID ${assignment.workerId} (datacenter ${assignment.datacenterId}) in namespace ` +
          `"${this.settings.namespace}" in ${Math.round(monotonicNow() - started)} ms`,
      );
      this.scheduleRenewal(this.settings.renewIntervalMs);
      return assignment;
    } catch (error) {
      this.state = 'idle';
      this.uncount?.();
      this.sentinel?.close();
      await this.client.close();
      throw error;
    }
  }

  /** Says at bootstrap what the split-brain guarantee needs from the Sentinels, where their set-up falls short. */
  private async checkSentinels(sentinel: SentinelConfirm): Promise<void> {
    const setup = await sentinel.setup();
    const majority = Math.floor(setup.sentinels / 2) + 1;
    const { logger } = this.context!;
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

  async stop(lastTimestamp: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.renewTimer);
    for (const pending of this.sleeps) {
      clearTimeout(pending.timer);
      pending.resolve();
    }
    this.sleeps.clear();
    this.rejectWaiters(
      new WorkerUnavailableError('stopped', 'The worker ID was released: the application is shutting down.'),
    );
    await this.enqueue(async () => {
      const lease = this.lease;
      this.lease = undefined;
      this.state = 'released';
      if (lease !== undefined) {
        lease.untrack(this.ticksToMs(lastTimestamp));
        try {
          const outcome = await this.release(lease, this.ticksToMs(lastTimestamp));
          const summary = this.describeRelease(lease, outcome, 'at shutdown');
          if (outcome.kind === 'released') this.context?.logger.log(summary);
          else this.context?.logger.warn(summary);
        } catch (error) {
          this.context?.logger.warn(
            `Could not release worker ID ${lease.workerId} (${message(error)}); it becomes free when its lease ` +
              'expires, and its ceiling in Redis covers every timestamp issued under it',
          );
        }
      }
    });
    this.uncount?.();
    this.sentinel?.close();
    await this.client?.close();
  }

  requestSwitch(lastTimestamp: number, reason: string): boolean {
    if (this.stopped) return false;
    if (this.state === 'switching' || this.state === 'lost' || this.state === 'settling') return true;
    const previous = this.lease;
    if (previous === undefined || this.state !== 'held') return false;
    this.state = 'switching';
    this.context!.reassign(null);
    const lastMs = this.ticksToMs(lastTimestamp);
    void this.enqueue(async () => {
      // A renewal in flight when the switch was asked for may have found the lease lost and re-claimed already:
      // the new lease starts above its own floor, and releasing it here would leak it.
      if (this.lease !== previous) return;
      previous.untrack(lastMs);
      try {
        const outcome = await this.release(previous, lastMs);
        if (outcome.kind === 'noted') {
          this.context!.logger.warn(this.describeRelease(previous, outcome, 'when switching'));
        }
      } catch (error) {
        // Like a loss: the exact last timestamp reaches the record before anything else is claimed, so that the
        // ID's next holder starts above it even if Redis lost the ceiling meanwhile.
        this.context!.logger.warn(
          `Could not release worker ID ${previous.workerId} before switching (${message(error)}); leaving a note`,
        );
        await this.leaveNote(previous, lastMs);
      }
      this.lease = undefined;
      await this.reclaim([previous.id], `switched from worker ID ${previous.workerId}: ${reason}`);
    });
    return true;
  }

  whenReady(): Promise<void> {
    if (this.state === 'held' && !this.isFenced()) return Promise.resolve();
    if (this.stopped) {
      return Promise.reject(
        new WorkerUnavailableError('stopped', 'The worker ID was released: the application is shutting down.'),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      // Long enough for a re-claim after data loss: one ttl of settling, a floor wait, and a few retries.
      const boundMs = 3 * this.settings.ttlMs + this.settings.maxFloorWaitMs;
      const timer = setTimeout(() => {
        this.readyWaiters = this.readyWaiters.filter((w) => w !== waiter);
        reject(
          new WorkerUnavailableError(
            this.state === 'settling' ? 'settling' : this.isFenced() && this.state === 'held' ? 'fenced' : 'lost',
            `No worker ID could be confirmed within ${boundMs} ms (lease ${this.leaseStatus().state}` +
              `${this.lastError === null ? '' : `: ${this.lastError}`}). Check the connection to Redis.`,
          ),
        );
      }, boundMs);
      timer.unref();
      this.readyWaiters.push(waiter);
    });
  }

  leaseStatus(): LeaseStatus {
    const lease = this.lease;
    const fenced = lease !== undefined && this.isFenced();
    const mono = monotonicNow();
    const wall = this.context?.clock.now() ?? Date.now();
    const offsetMs = this.serverClock.offsetNow(wall, mono);
    return {
      state: fenced && this.state === 'held' ? 'fenced' : this.state,
      namespace: this.settings.namespace,
      workerId: lease?.workerId ?? null,
      datacenterId: lease?.datacenterId ?? null,
      expiresAt: lease === undefined || offsetMs === null ? null : Math.round(lease.serverExpiry + offsetMs),
      fenceInMs: lease === undefined ? null : Math.max(0, Math.round(lease.fenceAt - monotonicNow())),
      lowestFenceInMs: this.settings.ttlMs - this.settings.fenceMarginMs - this.settings.renewIntervalMs,
      lastRenewalAt: this.lastRenewalAt,
      renewalFailures: this.renewalFailures,
      clockOffsetMs: offsetMs,
      clockErrorMs: this.serverClock.lastErrorMs,
      maxClockOffsetMs: this.settings.maxClockOffsetMs,
      clockInSync: this.serverClock.skewMs(wall, mono) <= this.serverClock.boundMs,
      settlingInMs: this.settlingUntil === null ? null : Math.max(0, Math.round(this.settlingUntil - mono)),
      ceilingMs: lease?.ceilingMs ?? null,
      floorMs: lease?.floorMs ?? null,
      switches: this.switches,
      lastError: this.lastError,
    };
  }

  /** The permit's answer: the confirmed ceiling, unless the lease may have lapsed. */
  private currentCeiling(nowMs: number): number {
    const lease = this.lease;
    if (lease === undefined || this.state !== 'held') {
      if (this.state === 'settling') {
        throw new WorkerUnavailableError(
          'settling',
          `Redis lost the data of namespace "${this.settings.namespace}" (restart, failover, flush or deleted keys); ` +
            'no worker ID is handed out until holders from before have stopped. Retry in a moment or use nextAsync().',
        );
      }
      throw new WorkerUnavailableError(
        'switching',
        'The worker ID is being re-claimed; retry in a moment or use nextAsync().',
      );
    }
    const mono = monotonicNow();
    if (this.serverClock.skewMs(nowMs, mono) > this.serverClock.boundMs) {
      this.renewEarly();
      throw new WorkerUnavailableError(
        'clock',
        `The wall clock stands ${this.serverClock.offsetNow(nowMs, mono)} ms from the Redis server's clock, beyond ` +
          `redis.maxClockOffsetMs (${this.serverClock.boundMs} ms): no IDs are issued until they agree again. ` +
          'Check the time synchronisation (NTP) of this machine and of Redis.',
      );
    }
    if (mono >= lease.fenceAt) {
      // Renewals have failed for too long: the lease may have lapsed in Redis and someone else may hold the ID.
      throw new WorkerUnavailableError(
        'fenced',
        `The lease on worker ID ${lease.workerId} could not be renewed in time, so no IDs are issued under it ` +
          `(last error: ${this.lastError ?? 'none'}). It resumes once Redis answers again.`,
      );
    }
    return lease.ceilingTicks;
  }

  private isFenced(): boolean {
    return this.lease === undefined || monotonicNow() >= this.lease.fenceAt;
  }

  /**
   * Claims an ID, retrying on failures up to `attempts` times (Infinity while running), waiting while the
   * namespace settles and for the clock to pass the previous holder's ceiling (or this process's own last
   * timestamp under that ID, whichever is higher).
   */
  private async claim(excluded: number[], attempts: number): Promise<WorkerAssignment> {
    let failures = 0;
    let backoff = this.settings.retryBackoffMs;
    let skip = [...excluded];
    let excludedDropped = false;
    const fail = async (error: string, final: () => Error): Promise<void> => {
      failures++;
      this.lastError = error;
      if (failures >= attempts) throw final();
      this.context!.logger.warn(`Claiming a worker ID failed (${error}); retrying in ${backoff} ms`);
      await this.sleep(backoff);
      backoff = Math.min(backoff * 2, this.settings.ttlMs / 4);
    };
    for (;;) {
      if (this.stopped) throw new WorkerUnavailableError('stopped', 'The application is shutting down.');
      const token = randomUUID();
      const clock = this.context!.clock;
      const holderNow = clock.now();
      const sentAt = monotonicNow();
      let reply: ClaimReply;
      try {
        reply = await this.claimOnce(token, holderNow, skip);
      } catch (error) {
        const text = message(error);
        await fail(text, () => new RedisUnavailableError(this.settings.namespace, failures, text));
        continue;
      }
      if (reply.kind !== 'settling') this.settlingUntil = null;
      if (reply.kind === 'exhausted') {
        if (!excludedDropped && excluded.length > 0) {
          excludedDropped = true;
          // No other ID is free: take the one we switched away from back. Its record holds our exact last
          // timestamp, so it waits (bounded by maxFloorWaitMs) for the clock to pass it, like any reused ID.
          this.context!.logger.warn(
            `No other worker ID of namespace "${this.settings.namespace}" is free; claiming worker ID ` +
              `${excluded.join(', ')} again, above its last timestamp`,
          );
          skip = skip.filter((id) => !excluded.includes(id));
          continue;
        }
        throw new LeaseExhaustedError(this.settings.namespace, reply.held, this.settings.idCount, skip.length);
      }
      if (reply.kind === 'busy') continue;
      if (reply.kind === 'mismatch') {
        throw new LeaseConfigMismatchError(this.settings.namespace, reply.recorded, this.settings.config, reply.live);
      }
      if (reply.kind === 'settling') {
        if (this.state !== 'settling') {
          this.context!.logger.log(
            `Namespace "${this.settings.namespace}" is settling after its marker was created (first use, or Redis ` +
              'restarted, failed over or lost some or all of its data); ' +
              `waiting ${reply.waitMs} ms so that earlier holders have stopped`,
          );
        }
        this.state = 'settling';
        this.settlingUntil = monotonicNow() + reply.waitMs;
        await this.sleep(reply.waitMs + 5);
        continue;
      }
      const lease = this.toLease(reply, token, holderNow, sentAt);
      const offset = this.clockCheck();
      if (offset !== undefined) {
        await this.release(lease, lease.floorMs ?? -1).catch(() => undefined);
        lease.untrack(-1);
        await fail(
          `clock offset ${Math.round(offset.offsetMs)} ms ± ${Math.ceil(offset.errorMs)} ms beyond ` +
            `redis.maxClockOffsetMs (${this.settings.maxClockOffsetMs} ms)`,
          () => new ClockOutOfSyncError(this.settings.namespace, offset.offsetMs, offset.errorMs, offset.boundMs),
        );
        continue;
      }
      const floorWait = this.floorWaitMs(lease);
      if (floorWait > this.settings.maxFloorWaitMs) {
        this.context!.logger.warn(
          `Worker ID ${lease.workerId}'s previous holder issued up to ${new Date(lease.floorMs!).toISOString()}, ` +
            `${floorWait} ms ahead of this clock; taking another ID`,
        );
        await this.release(lease, lease.floorMs!).catch(() => undefined);
        lease.untrack(-1);
        skip.push(lease.id);
        continue;
      }
      const unconfirmed = (await this.confirm(reply, 'claim')) ?? (await this.replicasMissing('claim'));
      if (unconfirmed !== undefined) {
        await this.release(lease, lease.floorMs ?? -1).catch(() => undefined);
        lease.untrack(-1);
        await fail(unconfirmed, () => new RedisUnavailableError(this.settings.namespace, failures, unconfirmed));
        continue;
      }
      if (floorWait > 0) {
        this.context!.logger.log(
          `Waiting ${floorWait} ms for the clock to pass worker ID ${lease.workerId}'s previous ceiling`,
        );
        if (!(await this.waitForFloor(lease, floorWait))) {
          lease.untrack(-1);
          continue;
        }
      }
      this.lease = lease;
      this.state = 'held';
      this.renewalFailures = 0;
      this.lastRenewalAt = clock.now();
      this.lastError = null;
      return {
        workerId: lease.workerId,
        datacenterId: lease.datacenterId,
        floor: lease.floorMs === null ? -1 : this.msToTicks(lease.floorMs),
        permit: this.permit,
      };
    }
  }

  private async claimOnce(token: string, holderNowMs: number, excluded: number[]): Promise<ClaimReply> {
    const sent = this.stamp();
    const reply = LeaseProtocol.decodeClaim(
      await this.client!.run(
        'claim',
        this.protocol.scriptKeys,
        this.protocol.claimArgs({ token, holderNowMs, host: hostname(), pid: process.pid, excluded }),
      ),
    );
    this.observeClock(sent, reply);
    return reply;
  }

  /** The wall and monotonic clocks now, read together. */
  private stamp(): { wall: number; mono: number } {
    return { wall: this.context!.clock.now(), mono: monotonicNow() };
  }

  private observeClock(sent: { wall: number; mono: number }, reply: ServerStamp): void {
    this.serverClock.observe(sent, this.stamp(), reply.serverMs, reply.runId);
  }

  /** Undefined when the clock of the last round trip agrees with the server's; else what was measured. */
  private clockCheck(): { offsetMs: number; errorMs: number; boundMs: number } | undefined {
    const offsetMs = this.serverClock.lastOffsetMs ?? 0;
    const errorMs = this.serverClock.lastErrorMs ?? 0;
    if (this.serverClock.accepts(offsetMs, errorMs)) return undefined;
    return { offsetMs, errorMs, boundMs: this.serverClock.boundMs };
  }

  /**
   * With Sentinel, whether a majority of the Sentinels name the process that answered as the master; undefined when
   * they do (or without Sentinel), else why not. When they name another master the client reconnects, so that it
   * finds the new one.
   */
  private async confirm(reply: ServerStamp, what: string): Promise<string | undefined> {
    if (this.sentinel === undefined) return undefined;
    const verdict = await this.sentinel.confirm(reply.runId);
    if (verdict.kind === 'confirmed') return undefined;
    if (verdict.kind === 'replaced') {
      this.context!.logger.warn(
        `The Sentinels of "${this.sentinel.masterName}" name another master (${verdict.masterRunId}) than the Redis ` +
          `process that answered the ${what} (${reply.runId}); reconnecting`,
      );
      this.client!.reconnect();
      return `the Sentinels name another master than the Redis process that answered the ${what}`;
    }
    // Sentinels that name another process, without a majority yet: a failover may be under way, and the client
    // reconnects so that it follows the master the Sentinels name.
    if (verdict.elsewhere) this.client!.reconnect();
    return `the ${what} is not confirmed: ${verdict.detail}`;
  }

  /** With `waitForReplicas`: undefined once enough replicas acknowledged the writes so far, else why not. */
  private async replicasMissing(what: string): Promise<string | undefined> {
    if (this.settings.waitForReplicas === 0) return undefined;
    const acked = await this.client!.waitForReplicas(
      this.settings.waitForReplicas,
      this.settings.waitForReplicasTimeoutMs,
    );
    if (acked >= this.settings.waitForReplicas) return undefined;
    return `only ${acked} of ${this.settings.waitForReplicas} replicas acknowledged the ${what}`;
  }

  private toLease(
    reply: Extract<ClaimReply, { kind: 'ok' }>,
    token: string,
    holderNow: number,
    sentAt: number,
  ): HeldLease {
    const { layout } = this.context!;
    const workerId = this.settings.allocateDatacenter ? reply.id & layout.maxWorkerId : reply.id;
    const datacenterId = this.settings.allocateDatacenter
      ? Math.floor(reply.id / 2 ** layout.workerBits)
      : this.fixedDatacenterId;
    // Whatever Redis says, never below what this process itself issued under the ID before (a clock-back switch or
    // a loss, then a data loss that handed the ID back without its record).
    const recordKey = this.protocol.recordKey(reply.id);
    const ownMs = ownHighWaterMs(recordKey);
    const floorRaw = Math.max(reply.floorMs, ownMs);
    const floorMs = floorRaw < 0 ? null : floorRaw;
    // The ceiling the claim script stored: it bounds what may be issued until the first renewal, which raises it
    // above this process's own mark if that is higher.
    const ceilingMs = Math.max(holderNow, reply.floorMs) + this.settings.ttlMs;
    const lease: HeldLease = {
      id: reply.id,
      token,
      marker: reply.marker,
      workerId,
      datacenterId,
      floorMs,
      ceilingMs,
      ceilingTicks: this.msToTicks(ceilingMs),
      fenceAt: sentAt + this.settings.ttlMs - this.settings.fenceMarginMs,
      serverExpiry: reply.expiry,
      untrack: () => undefined,
    };
    lease.untrack = trackHeld(recordKey, () =>
      this.lease === lease ? this.ticksToMs(this.context!.lastTimestamp()) : -1,
    );
    return lease;
  }

  /**
   * Waits `waitMs` for the clock to pass a claimed lease's floor, renewing the lease as it goes: a wait longer than
   * the TTL must neither let the ID lapse to someone else nor hand the generator a lease that is about to fence.
   * Returns false when the lease was lost meanwhile (claim again). On shutdown it releases the lease, keeping the
   * inherited ceiling, and throws.
   */
  private async waitForFloor(lease: HeldLease, waitMs: number): Promise<boolean> {
    const until = monotonicNow() + waitMs;
    for (;;) {
      const left = until - monotonicNow();
      if (left <= 0) return true;
      await this.sleep(Math.min(left, this.settings.renewIntervalMs));
      if (this.stopped) {
        await this.release(lease, lease.floorMs ?? -1).catch(() => undefined);
        throw new WorkerUnavailableError('stopped', 'The application is shutting down.');
      }
      if (monotonicNow() < lease.fenceAt - this.settings.renewIntervalMs) continue;
      try {
        const outcome = await this.extend(lease);
        if (outcome.kind === 'lost') {
          this.context!.logger.warn(
            `Worker ID ${lease.workerId} was lost while waiting for its floor (${describeLoss(outcome.reason)}); claiming again`,
          );
          return false;
        }
      } catch (error) {
        // Not confirmed: the lease may lapse. Nothing was issued under it, so claiming afresh is safe; give it back
        // if Redis answers, so that the ID is not held for a TTL under a token nobody uses.
        this.lastError = message(error);
        this.context!.logger.warn(
          `Renewing worker ID ${lease.workerId} while waiting for its floor failed (${this.lastError}); claiming again`,
        );
        await this.release(lease, lease.floorMs ?? -1).catch(() => undefined);
        return false;
      }
    }
  }

  /** How long the clock must advance before the first timestamp above the floor can be issued. */
  private floorWaitMs(lease: HeldLease): number {
    if (lease.floorMs === null) return 0;
    const { layout, clock } = this.context!;
    const firstAllowedMs = layout.epoch + (this.msToTicks(lease.floorMs) + 1) * layout.timeUnitMs;
    return Math.max(0, Math.ceil(firstAllowedMs - clock.now()));
  }

  /** The clock ran past the ceiling (it jumped forward): renew now rather than at the next tick, once per back-off. */
  private renewEarly(): void {
    const now = monotonicNow();
    if (this.renewing || now - this.lastEarlyRenewal < this.settings.retryBackoffMs) return;
    this.lastEarlyRenewal = now;
    this.scheduleRenewal(0);
  }

  private scheduleRenewal(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.renewTimer);
    this.renewTimer = setTimeout(() => void this.enqueue(() => this.renew()), delayMs);
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    const lease = this.lease;
    if (this.stopped || lease === undefined || this.state !== 'held') return;
    this.renewing = true;
    try {
      const wasFenced = monotonicNow() >= lease.fenceAt;
      const outcome = await this.extend(lease);
      if (outcome.kind === 'lost') {
        await this.handleLoss(lease, outcome.reason);
        return;
      }
      if (outcome.kind === 'recovered') {
        this.context!.logger.warn(
          `Redis lost the data of namespace "${this.settings.namespace}" (restart, failover, flush or deleted keys); ` +
            `worker ID ${lease.workerId} was taken back into the new data with its ceiling, and IDs kept flowing`,
        );
      }
      if (this.renewalFailures > 0 || wasFenced) {
        this.context!.logger.log(
          `Lease on worker ID ${lease.workerId} renewed again after ${this.renewalFailures} failures`,
        );
      }
      this.renewalFailures = 0;
      this.lastError = null;
      this.resolveWaiters();
      this.scheduleRenewal(this.settings.renewIntervalMs);
    } catch (error) {
      this.renewalFailures++;
      this.lastError = message(error);
      this.context!.logger.warn(
        `Renewing the lease on worker ID ${lease.workerId} failed (${this.renewalFailures} in a row): ${this.lastError}`,
      );
      const backoff = Math.min(
        this.settings.retryBackoffMs * 2 ** (this.renewalFailures - 1),
        this.settings.renewIntervalMs,
      );
      this.scheduleRenewal(backoff);
    } finally {
      this.renewing = false;
    }
  }

  /**
   * One renewal round trip: extends the lease and raises its ceiling in Redis, then locally. The fence moves only
   * once Redis (and the replicas asked for, and the Sentinels) confirmed, counted from when the request was sent.
   * After a data loss the same call takes the ID back, with the previous lease's expiry as proof that it had not
   * lapsed.
   *
   * @throws when Redis cannot be reached, or the replicas or Sentinels did not confirm in time
   */
  private async extend(lease: HeldLease): Promise<{ kind: 'ok' | 'recovered' } | { kind: 'lost'; reason: string }> {
    const { clock, layout } = this.context!;
    const lastTicks = this.context!.lastTimestamp();
    const lastMs = lastTicks < 0 ? -1 : layout.epoch + lastTicks * layout.timeUnitMs;
    const ceilingMs = Math.max(clock.now(), lastMs) + this.settings.ttlMs;
    const sent = this.stamp();
    const reply = LeaseProtocol.decodeRenew(
      await this.client!.run(
        'renew',
        this.protocol.scriptKeys,
        this.protocol.renewArgs(
          {
            id: lease.id,
            token: lease.token,
            ceilingMs,
            marker: lease.marker,
            previousExpiry: lease.serverExpiry,
            marginMs: this.settings.fenceMarginMs,
          },
          randomUUID(),
        ),
      ),
    );
    this.observeClock(sent, reply);
    if (reply.kind === 'lost') return { kind: 'lost', reason: reply.reason };
    const unconfirmed = (await this.confirm(reply, 'renewal')) ?? (await this.replicasMissing('renewal'));
    if (unconfirmed !== undefined) throw new Error(unconfirmed);
    lease.marker = reply.marker;
    lease.ceilingMs = Math.max(lease.ceilingMs, ceilingMs);
    lease.ceilingTicks = this.msToTicks(lease.ceilingMs);
    lease.fenceAt = sent.mono + this.settings.ttlMs - this.settings.fenceMarginMs;
    lease.serverExpiry = reply.expiry;
    this.lastRenewalAt = clock.now();
    return { kind: reply.kind };
  }

  /** The lease is gone or taken: stop issuing at once, leave a note of the last timestamp, re-claim. */
  private async handleLoss(lease: HeldLease, reason: string): Promise<void> {
    this.state = 'lost';
    const lastTicks = this.context!.lastTimestamp();
    const lastMs = lastTicks < 0 ? -1 : this.ticksToMs(lastTicks);
    lease.untrack(lastMs);
    this.lease = undefined;
    this.context!.reassign(null);
    this.context!.logger.error(
      `Lease on worker ID ${lease.workerId} lost (${describeLoss(reason)}); stopped issuing under it and re-claiming`,
    );
    // The note comes before any new claim: the claim needs Redis as much as the note does, and without the note
    // the ID's next holder would be bounded by the settling rule alone.
    await this.leaveNote(lease, lastMs);
    await this.reclaim([], `re-claimed after losing worker ID ${lease.workerId}`);
  }

  /** Leaves a note of `lastMs` on the lease's record, retrying with back-off until Redis takes it or the app stops. */
  private async leaveNote(lease: HeldLease, lastMs: number): Promise<void> {
    let backoff = this.settings.retryBackoffMs;
    while (!this.stopped) {
      try {
        await this.note(lease, lastMs);
        return;
      } catch (error) {
        this.lastError = message(error);
        this.context!.logger.warn(
          `Could not leave a note of the last timestamp on worker ID ${lease.workerId} (${this.lastError}); ` +
            `retrying in ${backoff} ms`,
        );
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, this.settings.renewIntervalMs);
      }
    }
  }

  /** Claims a new ID at run time (no attempt limit: Redis may come back), then hands it to the generator. */
  private async reclaim(excluded: number[], why: string): Promise<void> {
    if (this.stopped) return;
    this.state = this.state === 'switching' ? 'switching' : 'lost';
    try {
      const assignment = await this.claim(excluded, Infinity);
      this.switches++;
      this.context!.reassign(assignment);
      this.context!.logger.log(`Now worker ID ${assignment.workerId} (datacenter ${assignment.datacenterId}): ${why}`);
      this.resolveWaiters();
      this.scheduleRenewal(this.settings.renewIntervalMs);
    } catch (error) {
      if (this.stopped) return;
      this.lastError = message(error);
      this.context!.logger.error(`Could not claim another worker ID: ${this.lastError}; retrying`);
      await this.sleep(this.settings.ttlMs / 4);
      void this.enqueue(() => this.reclaim(excluded, why));
    }
  }

  private async release(lease: HeldLease, lastMs: number): Promise<ReleaseOutcome> {
    // Never below the floor: a lease claimed during shutdown (or while waiting for its floor) has issued nothing
    // yet, and `lastMs` may then come from the previous worker ID's frame, lower than the ceiling it inherited.
    const ceilingMs = Math.max(lastMs, lease.floorMs ?? -1);
    const reply = LeaseProtocol.decodeRelease(
      await this.client!.run(
        'release',
        this.protocol.scriptKeys,
        this.protocol.releaseArgs(lease.id, lease.token, ceilingMs, randomUUID()),
      ),
    );
    if (reply.kind === 'released') return { kind: 'released', lastMs: ceilingMs };
    // The record is no longer ours (Redis lost its data, or another holder took the ID), so the release wrote
    // nothing. Our last timestamp must still reach whoever holds the ID next, or it could issue below it.
    await this.note(lease, ceilingMs);
    return { kind: 'noted', lastMs: ceilingMs };
  }

  /** Raises the record's ceiling to `lastMs` (never lowers it), recreating the record if Redis lost it. */
  private async note(lease: HeldLease, lastMs: number): Promise<void> {
    noteOwnHighWaterMs(this.protocol.recordKey(lease.id), lastMs);
    LeaseProtocol.decodeNote(
      await this.client!.run('note', this.protocol.scriptKeys, this.protocol.noteArgs(lease.id, lastMs, randomUUID())),
    );
  }

  private describeRelease(lease: HeldLease, outcome: ReleaseOutcome, when: string): string {
    const last = outcome.lastMs < 0 ? 'nothing issued' : `last timestamp ${new Date(outcome.lastMs).toISOString()}`;
    if (outcome.kind === 'released') {
      return `Released worker ID ${lease.workerId} in namespace "${this.settings.namespace}" (${last})`;
    }
    return (
      `Worker ID ${lease.workerId} in namespace "${this.settings.namespace}" was no longer ours ${when} ` +
      `(Redis lost its data or another instance took it); noted ${last} on its record`
    );
  }

  private msToTicks(ms: number): number {
    const { epoch, timeUnitMs } = this.context!.layout;
    return Math.floor((ms - epoch) / timeUnitMs);
  }

  private ticksToMs(ticks: number): number {
    if (ticks < 0) return -1;
    const { epoch, timeUnitMs } = this.context!.layout;
    return epoch + ticks * timeUnitMs;
  }

  /** A back-off that {@link stop} cuts short. */
  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const pending = {
        timer: setTimeout(() => {
          this.sleeps.delete(pending);
          resolve();
        }, ms),
        resolve,
      };
      this.sleeps.add(pending);
    });
  }

  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.queue.then(operation);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private resolveWaiters(): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  private rejectWaiters(error: Error): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }
}

/** How late Sentinels may learn of a failover: their hello messages go out every 2 s. */
const SENTINEL_PROPAGATION_MS = 3000;

function describeLoss(reason: string): string {
  switch (reason) {
    case 'marker':
      return (
        'Redis restarted, failed over or lost some or all of its data, and the previous lease had lapsed or the ' +
        'namespace had settled: the namespace marker changed'
      );
    case 'missing':
      return 'its record is gone from Redis';
    case 'taken':
      return 'another instance holds it now';
    case 'config':
      return 'the namespace took another layout or TTL while this holder was paused past its lease';
    default:
      return reason;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
