import type { LoggerService } from '@nestjs/common';
import type { Clock } from '../core/clock.js';
import {
  ClockMovedBackError,
  SequenceExhaustedError,
  WorkerUnavailableError,
  WorkerWaitTimeoutError,
} from '../core/errors.js';
import type { SnowflakeGenerator } from '../core/generator.js';
import type { Layout } from '../core/layout.js';
import type { IssuePermit } from '../core/permit.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import { describeLeaseWait, reportsLease } from '../lease/lease.status.js';
import { DEFAULT_MAX_ASYNC_WAIT_MS, IssueWait, abortableSleep, untilAborted, type WaitOptions } from './issue-wait.js';
import { noteStaticHighWaterMs, reserveStaticWorker, staticHighWaterMs } from './process-workers.js';
import { StaticWorkerSource } from './static.source.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from './worker-source.js';

/**
 * The one link between a worker-ID source and the generator, and it runs one way: the source hands assignments in
 * (or suspends issuing), the binding moves the generator. Callers that must wait (a used-up sequence, a re-claim)
 * wait here, and a clock stepped back too far becomes a switch request here, never in the service or the source.
 */
export class WorkerBinding implements WorkerSourceContext {
  private assigned = false;
  private stopped = false;
  /** Frees a non-leased worker ID for the process. */
  private unreserve: (() => void) | undefined;
  private reserved: string | undefined;
  private started: Promise<void> | undefined;
  /**
   * The last timestamp issued under each worker ID this binding has moved the generator away from or handed back,
   * by `<datacenter>:<worker>`. An assignment never lowers the generator below it: a fixed worker ID applied again
   * at start (after IDs issued before it), or a source handing back an ID this generator used, would otherwise
   * restart that ID's sequence inside a time unit it already used.
   */
  private readonly issuedUpTo = new Map<string, number>();

  constructor(
    readonly generator: SnowflakeGenerator,
    readonly source: WorkerIdSource,
    readonly layout: Layout,
    readonly clock: Clock,
    readonly logger: LoggerService,
    /**
     * Whether the process-wide guard applies: a worker ID from a source other than the Redis lease is reserved for
     * this generator in the process. Off only where one process plays several (the conformance suite).
     */
    private readonly guardProcess = true,
    /** The longest an asynchronous call waits for a worker ID unless it passes its own `timeoutMs` (ms). */
    readonly maxAsyncWaitMs = DEFAULT_MAX_ASYNC_WAIT_MS,
  ) {
    if (source instanceof StaticWorkerSource) {
      // A fixed worker ID is known at once: the generator may issue before start (a service built by hand).
      const { workerId, datacenterId } = source.assignment;
      generator.assign(workerId, datacenterId, this.processFloor(datacenterId, workerId));
      this.assigned = true;
    } else {
      // Nothing is issued until the source has handed in a worker ID.
      generator.assign(0, generator.datacenterId, -1, blockedPermit('not-started'));
    }
  }

  /** Whether the source has handed in a worker ID that is still in use. */
  get isAssigned(): boolean {
    return this.assigned && !this.stopped;
  }

  /** Starts the source and applies its first assignment; once, however often it is called. */
  start(): Promise<void> {
    this.started ??= this.source.start(this).then(async (assignment) => {
      try {
        this.apply(assignment);
      } catch (error) {
        // Refused here (another generator of this process on the ID): what the source took (its host locks) is
        // given back, since no shutdown follows a failed bootstrap.
        await this.source.stop(this.lastTimestamp()).catch(() => undefined);
        throw error;
      }
    });
    return this.started;
  }

  /** Stops issuing, then gives the worker ID back with the last issued timestamp. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const last = this.lastTimestamp();
    this.generator.assign(this.generator.workerId, this.generator.datacenterId, last, blockedPermit('stopped'));
    this.assigned = false;
    try {
      await this.source.stop(last);
    } catch (error) {
      this.logger.error(`Releasing the worker ID failed: ${(error as Error).message}`);
    } finally {
      if (this.reserved !== undefined && last >= 0) {
        noteStaticHighWaterMs(
          this.clock,
          this.generator.datacenterId,
          this.generator.workerId,
          msAtTicks(this.layout, last),
        );
      }
      this.unreserve?.();
    }
  }

  lastTimestamp(): number {
    return this.generator.stats().lastTimestamp;
  }

  reassign(assignment: WorkerAssignment | null, reason: 'lost' | 'switching' = 'switching'): void {
    if (this.stopped) return;
    if (assignment !== null) return this.apply(assignment);
    this.assigned = false;
    const { workerId, datacenterId } = this.generator;
    this.generator.assign(workerId, datacenterId, this.lastTimestamp(), blockedPermit(reason));
  }

  /**
   * What the caller of a failed issue sees: with a source that can switch, a clock stepped back beyond the
   * tolerance starts a switch and reads as "switching"; anything else passes unchanged.
   */
  translate(error: unknown): unknown {
    if (error instanceof ClockMovedBackError && this.source.requestSwitch(this.lastTimestamp(), error.message)) {
      return new WorkerUnavailableError(
        'switching',
        `the clock stands ${error.behindMs} ms behind the last issued ID, beyond the tolerance`,
      );
    }
    return error;
  }

  /**
   * The wait budget of one asynchronous call: its `timeoutMs` or the module's `maxAsyncWaitMs`, and its signal.
   * @throws the signal's reason when it has aborted already; SnowflakeConfigError for options of the wrong kind
   */
  startWait(options?: WaitOptions): IssueWait {
    return new IssueWait(options, this.maxAsyncWaitMs);
  }

  /**
   * Waits until issuing may succeed after `caught`, or throws it (translated) when waiting cannot help. A wait for a
   * worker ID ends within what is left of `wait`'s bound, with a {@link WorkerWaitTimeoutError} saying why none came;
   * the signal ends any wait at once, with its reason.
   */
  async waitToIssue(caught: unknown, wait: IssueWait = this.startWait()): Promise<void> {
    const error = this.translate(caught);
    wait.signal?.throwIfAborted();
    if (error instanceof SequenceExhaustedError) {
      await abortableSleep(Math.max(1, Math.ceil(error.waitMs)), wait.signal);
    } else if (error instanceof WorkerUnavailableError && error.reason !== 'stopped' && !this.stopped) {
      if (wait.leftMs <= 0) throw this.timedOut(error, wait);
      // A short pause first: whenReady() may resolve at once (a lease waiting for its ceiling to be raised), and a
      // loop of resolved promises would starve the timers that renew it.
      await wait.measure(() => abortableSleep(1, wait.signal));
      await wait.measure(() => this.untilReady(error, wait));
    } else {
      throw error;
    }
  }

  /** `source.whenReady()`, cut short by the call's signal and by what is left of its bound. */
  private async untilReady(refusal: WorkerUnavailableError, wait: IssueWait): Promise<void> {
    const leftMs = wait.leftMs;
    if (leftMs <= 0) throw this.timedOut(refusal, wait);
    const bound = new AbortController();
    // Ref'd on purpose: a bounded wait keeps the process alive until it can answer, however the source waits.
    const timer = Number.isFinite(leftMs)
      ? setTimeout(() => bound.abort(this.timedOut(refusal, wait)), Math.ceil(leftMs))
      : undefined;
    const signal = wait.signal === undefined ? bound.signal : AbortSignal.any([bound.signal, wait.signal]);
    try {
      await untilAborted(this.source.whenReady(signal), signal);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The error of a wait that ran out: how long, and why no worker ID came (the lease's state, its last error). */
  private timedOut(refusal: WorkerUnavailableError, wait: IssueWait): WorkerWaitTimeoutError {
    const { source } = this;
    const report = { waitedMs: wait.waitedMs, limitMs: wait.limitMs, limitFrom: wait.limitFrom };
    if (reportsLease(source))
      return new WorkerWaitTimeoutError({ ...report, ...describeLeaseWait(source.leaseStatus()) });
    return new WorkerWaitTimeoutError({
      ...report,
      state: refusal.reason,
      lastError: null,
      detail: `the ${source.kind} worker-ID source refused: ${refusal.message}`,
      retryAfterMs: refusal.retryAfterMs,
    });
  }

  private apply(assignment: WorkerAssignment): void {
    // A start that ends after a stop (the app shut down while a ceiling file waited for the clock): no IDs after it.
    if (this.stopped) return;
    // Two generators of one process on one fixed worker ID would issue the same IDs: the second refuses to start.
    // A lease keeps its own process-wide registry, and its backend hands an ID to one holder at a time.
    if (
      this.guardProcess &&
      this.source.kind !== 'redis' &&
      this.reserved !== `${assignment.datacenterId}:${assignment.workerId}`
    ) {
      const unreserve = reserveStaticWorker(assignment.datacenterId, assignment.workerId);
      this.unreserve?.();
      this.unreserve = unreserve;
      this.reserved = `${assignment.datacenterId}:${assignment.workerId}`;
    }
    const { generator } = this;
    const current = `${generator.datacenterId}:${generator.workerId}`;
    this.issuedUpTo.set(current, Math.max(this.issuedUpTo.get(current) ?? -1, this.lastTimestamp()));
    const own = Math.max(
      this.issuedUpTo.get(`${assignment.datacenterId}:${assignment.workerId}`) ?? -1,
      this.source.kind === 'redis' ? -1 : this.processFloor(assignment.datacenterId, assignment.workerId),
    );
    generator.assign(assignment.workerId, assignment.datacenterId, Math.max(assignment.floor, own), assignment.permit);
    this.assigned = true;
  }

  /** The floor, in ticks, above what a stopped generator of this process issued under a static worker ID. */
  private processFloor(datacenterId: number, workerId: number): number {
    if (!this.guardProcess) return -1;
    const markMs = staticHighWaterMs(this.clock, datacenterId, workerId);
    return markMs < 0 ? -1 : Math.max(-1, ticksAtMs(this.layout, markMs));
  }
}

/** A permit that refuses every ID with `reason`: a generator between worker IDs, or before its first. @internal */
export function blockedPermit(reason: 'not-started' | 'stopped' | 'switching' | 'lost'): IssuePermit {
  return {
    ceiling(): number {
      throw new WorkerUnavailableError(reason);
    },
  };
}
