import { bothClocks, type Clocks } from '../core/clock.js';
import { WorkerUnavailableError } from '../core/errors.js';
import { msAtTicks } from '../core/time-units.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../worker/worker-source.js';
import { SerialQueue, Sleeper, Waiters } from './async-tools.js';
import { claimLease } from './claim-loop.js';
import type { LeaseBackend } from './lease.backend.js';
import { RedisLeaseBackend } from './redis/redis-lease.backend.js';
import { leaseKeys, type LeaseKeys } from './lease.keys.js';
import { SETTLE_AFTER_LOSS_MS } from './lease.contract.js';
import { nextRenewalInMs } from './lease.math.js';
import { RenewalHistory } from './renewal-history.js';
import { isFenced, transition, type HeldLease, type LeasePhase } from './lease.phase.js';
import { describeLease, leaseNotReady, type LeaseStatus } from './lease.status.js';
import { message } from './give-back.js';
import { recoveryLine, settlingLine } from './lease.messages.js';
import { buildLeaseParts, type LeaseParts } from './lease.parts.js';
import { describeLoss } from './lease.rounds.js';
import type { LeaseSettings } from './lease.settings.js';
import { RenewalTimer } from './renewal-timer.js';
import {
  RenewalObservers,
  renewalFailureCause,
  type LeaseRenewalListener,
  type ObservesRenewals,
} from './renewal-observers.js';
import { ServerClock } from './server-clock.js';

const DEFAULT_CLOCKS = bothClocks();

/** Opens the backend a lease runs on: Redis, unless a test gives another. */
export type LeaseBackendFactory = (settings: LeaseSettings, keys: LeaseKeys) => Promise<LeaseBackend>;

/**
 * The Redis worker-ID lease, as a phase machine ({@link LeasePhase}) that this class alone moves: it claims an ID
 * before the app serves, renews it on an unref'd timer, fences itself when renewals stop (derived from time), takes
 * its ID back after a data loss, re-claims after a loss, switches ID when the clock steps back too far, and releases
 * on shutdown. The round trips, the claim loop, the arithmetic and the timers are parts it calls, which return
 * outcomes. The invariants it keeps are described in the README.
 */
export class RedisWorkerSource implements WorkerIdSource, ObservesRenewals {
  readonly kind = 'redis' as const;
  private phase: LeasePhase = { name: 'idle' };
  private readonly keys: LeaseKeys;
  private readonly serverClock: ServerClock;
  private readonly queue = new SerialQueue();
  private readonly sleeper = new Sleeper();
  private readonly waiters = new Waiters();
  private readonly renewal: RenewalTimer;
  private readonly history: RenewalHistory;
  /** Built once in start() (lease.parts.ts); undefined before. */
  private parts: LeaseParts | undefined;
  private switches = 0;
  private readonly renewalObservers = new RenewalObservers((error) => {
    this.parts?.context.logger.warn(`A lease renewal listener threw (ignored): ${message(error)}`);
  });

  constructor(
    private readonly settings: LeaseSettings,
    private readonly fixedDatacenterId: number,
    private readonly openBackend: LeaseBackendFactory = (s, keys) => RedisLeaseBackend.create(s, keys),
    /** Which free ID a contended claim tries (never what makes it safe: the claim script decides that). */
    private readonly random: () => number = Math.random,
  ) {
    this.keys = leaseKeys(settings, fixedDatacenterId);
    this.serverClock = new ServerClock(settings.maxClockOffsetMs, settings.ttlMs);
    this.history = new RenewalHistory(settings);
    // The clocks of start() (the app's), not the defaults: the timer is built before start() gets them.
    const clocks: Clocks = { now: () => this.clocks.now(), monotonicNow: () => this.clocks.monotonicNow() };
    this.renewal = new RenewalTimer(this.sleeper, clocks, settings.retryBackoffMs, () => {
      void this.queue.run(() => this.renew());
    });
  }

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    const clocks = bothClocks(context.clock);
    this.moveTo({ name: 'claiming' });
    const started = clocks.monotonicNow();
    const backend = await this.openBackend(this.settings, this.keys);
    const parts = buildLeaseParts(
      {
        settings: this.settings,
        keys: this.keys,
        fixedDatacenterId: this.fixedDatacenterId,
        serverClock: this.serverClock,
        sleeper: this.sleeper,
        random: this.random,
        isStopped: () => this.isStopped(),
        history: this.history,
        phase: () => this.phase,
        renewEarly: () => this.renewal.early(),
        settling: (untilMono) => this.settling(untilMono),
        holds: (lease) => this.heldLease() === lease,
        adopt: (lease, why) => this.adopt(lease, why),
      },
      context,
      clocks,
      backend,
    );
    this.parts = parts;
    // The claim may wait (settling, a full namespace, Redis away) on unref'd timers, and a client that stopped
    // reconnecting holds nothing open: a ref'd handle keeps the process alive until the bootstrap boots or fails,
    // so an app whose main() awaits it never ends without an error (Node's exit code 13, or 0).
    const keepAlive = setInterval(() => undefined, 60_000);
    try {
      await backend.connect(this.settings.connectTimeoutMs);
      await backend.checkSetup?.(context.logger);
      const lease = await claimLease(parts.claimHost, [], this.settings.bootstrapAttempts);
      this.hold(lease);
      context.logger.log(
        `Claimed worker ID ${lease.workerId} (datacenter ${lease.datacenterId}) in namespace ` +
          `"${this.settings.namespace}" in ${Math.round(this.clocks.monotonicNow() - started)} ms`,
      );
      return this.started.assignment(lease);
    } catch (error) {
      // A stop during the bootstrap claim leaves it released.
      if (!this.isStopped()) this.moveTo({ name: 'idle' });
      parts.uncount();
      await backend.close();
      throw error;
    } finally {
      clearInterval(keepAlive);
    }
  }

  async stop(lastTimestamp: number): Promise<void> {
    if (this.isStopped()) return;
    const lease = this.heldLease();
    this.moveTo({ name: 'released' });
    this.renewal.stop();
    this.sleeper.cancelAll();
    this.waiters.rejectAll(new WorkerUnavailableError('stopped'));
    await this.queue.run(async () => {
      if (lease === undefined) return;
      const lastMs = this.toMs(lastTimestamp);
      lease.untrack(lastMs);
      await this.started.giveBack.atShutdown(lease, lastMs);
    });
    this.parts?.uncount();
    await this.parts?.backend.close();
  }

  requestSwitch(lastTimestamp: number, reason: string): boolean {
    if (this.isStopped()) return false;
    if (this.phase.name === 'switching' || this.phase.name === 'lost' || this.phase.name === 'settling') return true;
    const previous = this.heldLease();
    if (previous === undefined) return false;
    this.moveTo({ name: 'switching' });
    this.started.context.reassign(null);
    const lastMs = this.toMs(lastTimestamp);
    previous.untrack(lastMs);
    void this.queue.run(async () => {
      await this.started.giveBack.beforeSwitch(previous, lastMs);
      await this.started.recovery.reclaim([previous.id], `switched from worker ID ${previous.workerId}: ${reason}`);
    });
    return true;
  }

  /**
   * Resolves once the lease is held and not fenced; rejects on shutdown, or with the signal's reason once it aborts
   * (the binding aborts it when the call's bound runs out). Without a signal it gives up after the time a re-claim
   * after a data loss takes: settling, a floor wait and a TTL of retries.
   */
  whenReady(signal?: AbortSignal): Promise<void> {
    const lease = this.heldLease();
    if (lease !== undefined && !isFenced(lease, this.clocks.monotonicNow())) return Promise.resolve();
    if (this.isStopped()) return Promise.reject(new WorkerUnavailableError('stopped'));
    const limitMs =
      signal === undefined ? SETTLE_AFTER_LOSS_MS + this.settings.ttlMs + this.settings.maxFloorWaitMs : Infinity;
    return this.waiters.wait(limitMs, () => leaseNotReady(this.leaseStatus(), limitMs), signal);
  }

  leaseStatus(): LeaseStatus {
    return describeLease({
      phase: this.phase,
      settings: this.settings,
      serverClock: this.serverClock,
      mono: this.clocks.monotonicNow(),
      wall: this.clocks.now(),
      lastRenewalAt: this.history.lastRenewalAt,
      renewalFailures: this.history.failuresInARow,
      switches: this.switches,
      lastError: this.history.lastError,
      capacity: this.parts?.capacity.current ?? null,
    });
  }

  /**
   * Calls `listener` after every renewal round trip, with its outcome and duration (the metrics entry records them).
   * Returns the function that removes it. Without listeners, renewals read no extra clock.
   */
  onRenewal(listener: LeaseRenewalListener): () => void {
    return this.renewalObservers.add(listener);
  }

  /** One renewal, run on the queue: its outcome decides the next phase. */
  private async renew(): Promise<void> {
    const lease = this.heldLease();
    if (lease === undefined) return;
    this.renewal.renewing = true;
    const observe = this.renewalObservers.time(() => this.clocks.monotonicNow(), lease.workerId);
    try {
      const wasFenced = isFenced(lease, this.clocks.monotonicNow());
      const outcome = await this.started.rounds.extend(lease, this.toMs(this.started.context.lastTimestamp()));
      if (this.heldLease() !== lease) return;
      if (outcome.kind === 'lost') {
        observe('lost', outcome.reason);
        return await this.handleLoss(lease, outcome.reason);
      }
      observe(outcome.kind === 'ok' ? 'renewed' : 'recovered');
      if (outcome.kind === 'recovered') {
        const line = recoveryLine(this.settings.namespace, lease.workerId, outcome.intact);
        this.started.context.logger[line.level](line.text);
      }
      this.history.renewed(lease.workerId, wasFenced, this.clocks.now(), this.started.context.logger);
      this.waiters.resolveAll();
      this.renewal.schedule(nextRenewalInMs(lease.fenceAt - this.clocks.monotonicNow(), this.settings));
    } catch (error) {
      observe('failed', renewalFailureCause(error));
      this.renewal.schedule(this.history.failed(lease.workerId, message(error), this.started.context.logger));
    } finally {
      this.renewal.renewing = false;
    }
  }

  /** The lease is gone or taken: stop issuing at once, then leave a note of the last timestamp and re-claim. */
  private handleLoss(lease: HeldLease, reason: string): Promise<void> {
    this.moveTo({ name: 'lost' });
    const lastMs = this.toMs(this.started.context.lastTimestamp());
    lease.untrack(lastMs);
    this.started.context.reassign(null, 'lost');
    this.started.context.logger.error(
      `Lease on worker ID ${lease.workerId} lost (${describeLoss(reason)}); stopped issuing under it and re-claiming`,
    );
    return this.started.recovery.afterLoss(lease, reason, lastMs);
  }

  /** Takes a lease claimed after a loss or a switch, and hands it to the generator. */
  private adopt(lease: HeldLease, why: string): void {
    this.switches++;
    this.hold(lease);
    this.started.context.reassign(this.started.assignment(lease));
    this.started.context.logger.log(`Now worker ID ${lease.workerId} (datacenter ${lease.datacenterId}): ${why}`);
    this.waiters.resolveAll();
  }

  /** Enters `held` with a confirmed lease and starts its renewals. */
  private hold(lease: HeldLease): void {
    this.moveTo({ name: 'held', lease });
    this.history.succeeded(this.clocks.now());
    this.renewal.schedule(this.settings.renewIntervalMs);
  }

  private settling(untilMono: number | null): void {
    if (this.isStopped()) return;
    if (untilMono === null) {
      if (this.phase.name === 'settling') this.moveTo({ name: 'claiming' });
      return;
    }
    if (this.phase.name !== 'settling') {
      this.started.context.logger.log(settlingLine(this.settings.namespace, untilMono - this.clocks.monotonicNow()));
    }
    this.moveTo({ name: 'settling', untilMono });
  }

  /** Every phase change goes through the table of allowed moves (lease.phase.ts). */
  private moveTo(next: LeasePhase): void {
    this.phase = transition(this.phase, next);
  }

  /** The parts of a started lease: every path that reads them runs after start() built them. */
  private get started(): LeaseParts {
    if (this.parts === undefined) throw new Error('the Redis lease has not started');
    return this.parts;
  }

  /** The app's clocks once started; the process's own before (a status read before the app boots). */
  private get clocks(): Clocks {
    return this.parts?.clocks ?? DEFAULT_CLOCKS;
  }

  private heldLease(): HeldLease | undefined {
    return this.phase.name === 'held' ? this.phase.lease : undefined;
  }

  private isStopped(): boolean {
    return this.phase.name === 'released';
  }

  private toMs(ticks: number): number {
    return msAtTicks(this.started.context.layout, ticks);
  }
}
