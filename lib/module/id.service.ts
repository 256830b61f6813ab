import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { SnowflakeCodec, type ComposeInput, type SnowflakeParts } from '../core/codec.js';
import { ClockMovedBackError, SequenceExhaustedError, WorkerUnavailableError } from '../core/errors.js';
import { SnowflakeGenerator, assertBatchCount, type GeneratorStats } from '../core/generator.js';
import type { Layout } from '../core/layout.js';
import type { IssuePermit } from '../core/permit.js';
import { reserveStaticWorker } from '../worker/process-workers.js';
import { StaticWorkerSource } from '../worker/static.source.js';
import type { LeaseStatus, WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../worker/worker-source.js';
import { SNOWFLAKE_MODULE_OPTIONS } from './snowflake.module-definition.js';
import type { SnowflakeModuleOptions } from './snowflake.options.js';
import { resolveSettings, type SnowflakeSettings } from './snowflake.settings.js';

/**
 * What `IdService.status()` reports: the worker, the generator's counters and, with a Redis lease, the lease.
 *
 * @publicApi
 */
export interface SnowflakeStatus extends GeneratorStats {
  source: 'static' | 'hostname' | 'redis';
  /** Whether an ID may be issued right now. */
  ready: boolean;
  workerId: number | null;
  datacenterId: number | null;
  /** The last issued timestamp (or the floor before the first ID) as Unix ms; null before any. */
  lastTimestampMs: number | null;
  /** How far the clock stands behind the timestamp it must exceed, in ms; 0 when it is ahead. */
  clockBehindMs: number;
  /**
   * The module's clock when this status was taken, as Unix ms. The other times here (the lease's `expiresAt`,
   * `lastRenewalAt`) are read from that clock, so compare them with this rather than with `Date.now()`.
   */
  nowMs: number;
  /** The lease, when the worker ID comes from Redis. */
  lease?: LeaseStatus;
}

/**
 * Issues and decodes IDs. Inject it by class.
 *
 * @publicApi
 */
@Injectable()
export class IdService implements OnModuleInit, OnApplicationShutdown {
  /** The validated layout IDs follow. */
  readonly layout: Layout;
  private readonly logger = new Logger('Snowflake');
  private readonly settings: SnowflakeSettings;
  private readonly codec: SnowflakeCodec;
  private readonly generator: SnowflakeGenerator;
  private source: WorkerIdSource | undefined;
  private assigned = false;
  private stopped = false;
  /** Frees this generator's static worker ID for the process. */
  private releaseStaticWorker: (() => void) | undefined;

  constructor(@Inject(SNOWFLAKE_MODULE_OPTIONS) options: SnowflakeModuleOptions) {
    this.settings = resolveSettings(options);
    this.layout = this.settings.layout;
    this.codec = new SnowflakeCodec(this.layout);
    const { worker } = this.settings;
    const isStatic = worker.kind !== 'redis';
    this.generator = new SnowflakeGenerator({
      layout: this.layout,
      clock: this.settings.clock,
      clockBackToleranceMs: this.settings.clockBackToleranceMs,
      maxSyncWaitMs: this.settings.maxSyncWaitMs,
      workerId: isStatic ? worker.workerId : 0,
      datacenterId: this.settings.datacenterId,
      // A leased worker ID issues nothing until the lease is claimed.
      permit: isStatic ? undefined : blockedPermit('not-started'),
    });
    if (isStatic) {
      this.source = new StaticWorkerSource(worker.kind, worker.workerId, this.settings.datacenterId);
      this.assigned = true;
    }
  }

  /** Claims the worker ID (with a lease) before the app serves. */
  async onModuleInit(): Promise<void> {
    if (this.settings.worker.kind !== 'redis') {
      // Two generators of one process on one worker ID would issue the same IDs: the second refuses to start.
      this.releaseStaticWorker = reserveStaticWorker(this.settings.datacenterId, this.settings.worker.workerId);
    }
    if (this.settings.worker.kind === 'redis') {
      const { RedisWorkerSource } = await import('../lease/redis-worker.source.js');
      this.source = new RedisWorkerSource(this.settings.worker.lease, this.settings.datacenterId);
    }
    const assignment = await this.source!.start(this.sourceContext());
    this.applyAssignment(assignment);
  }

  /** Releases the worker ID, recording the last issued timestamp, once the app has stopped serving. */
  async onApplicationShutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const last = this.generator.stats().lastTimestamp;
    this.generator.assign(this.generator.workerId, this.generator.datacenterId, last, blockedPermit('stopped'));
    this.assigned = false;
    try {
      await this.source?.stop(last);
    } catch (error) {
      this.logger.error(`Releasing the worker ID failed: ${(error as Error).message}`);
    }
    this.releaseStaticWorker?.();
  }

  /** The current worker ID. */
  get workerId(): number {
    return this.generator.workerId;
  }

  /** The current datacenter ID. */
  get datacenterId(): number {
    return this.generator.datacenterId;
  }

  /** The next ID. @throws ClockMovedBackError, SequenceExhaustedError, WorkerUnavailableError */
  next(): bigint {
    try {
      return this.generator.next();
    } catch (error) {
      throw this.translate(error);
    }
  }

  /** The next ID as a decimal string, the safe form for JSON and JavaScript clients. */
  nextString(): string {
    return this.next().toString();
  }

  /** The next ID as a number; only for layouts of 53 bits or fewer. @throws UnsafeNumberError otherwise */
  nextNumber(): number {
    try {
      return this.generator.nextNumber();
    } catch (error) {
      throw this.translate(error);
    }
  }

  /**
   * `count` IDs in increasing order, in one call. At most as many as the layout issues within `maxSyncWaitMs`
   * (40,960 on `twitter` with the default 10 ms), so that a batch never spins for the next time unit longer than
   * one {@link next} may. @throws BatchTooLargeError for more: use {@link nextBatchAsync}
   */
  nextBatch(count: number): bigint[] {
    try {
      return this.generator.nextBatch(count);
    } catch (error) {
      throw this.translate(error);
    }
  }

  /**
   * `count` IDs in increasing order, any number of them, waiting without blocking the event loop between time
   * units and while the lease is being re-claimed or switched (as {@link nextAsync} does).
   */
  async nextBatchAsync(count: number): Promise<bigint[]> {
    assertBatchCount(count, 'nextBatchAsync');
    const out: bigint[] = [];
    let waited = false;
    while (out.length < count) {
      try {
        this.generator.fillWithoutWaiting(out, count);
      } catch (caught) {
        await this.waitToIssue(caught);
        waited = true;
      }
    }
    // A lease switch while the batch waited continues under another worker ID, whose IDs may sort below the ones
    // before it. All are distinct; sorting restores the promised order.
    if (waited && !isIncreasing(out)) out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return out;
  }

  /**
   * The next ID, waiting (without blocking the event loop) when the sequence is used up or the lease is being
   * re-claimed or switched. Rejects when the wait cannot end (Redis unreachable past the retries).
   */
  async nextAsync(): Promise<bigint> {
    for (;;) {
      try {
        return this.generator.nextWithoutWaiting();
      } catch (caught) {
        await this.waitToIssue(caught);
      }
    }
  }

  /** Waits until issuing may succeed after `caught`, or throws it (translated) when waiting cannot help. */
  private async waitToIssue(caught: unknown): Promise<void> {
    const error = this.translate(caught);
    if (error instanceof SequenceExhaustedError) {
      await sleep(Math.max(1, Math.ceil(error.waitMs)));
    } else if (
      error instanceof WorkerUnavailableError &&
      error.reason !== 'stopped' &&
      this.source !== undefined &&
      !this.stopped
    ) {
      // A short pause first: whenReady() may resolve at once (a lease waiting for its ceiling to be raised),
      // and a loop of resolved promises would starve the timers that renew it.
      await sleep(1);
      await this.source.whenReady();
    } else {
      throw error;
    }
  }

  /** Splits an ID into time, datacenter, worker and sequence. @throws InvalidSnowflakeError on malformed input */
  decode(id: bigint | string | number): SnowflakeParts {
    return this.codec.decode(id);
  }

  /** Builds an ID from its parts; the inverse of {@link decode}. */
  compose(parts: ComposeInput): bigint {
    return this.codec.compose(parts);
  }

  /** The smallest ID issued at `date` (its time unit): the lower bound of `WHERE id BETWEEN`. */
  minIdAt(date: Date | number): bigint {
    return this.codec.minIdAt(date);
  }

  /** The largest ID issued at `date` (its time unit): the upper bound of `WHERE id BETWEEN`. */
  maxIdAt(date: Date | number): bigint {
    return this.codec.maxIdAt(date);
  }

  /** The worker, the counters and the lease. */
  status(): SnowflakeStatus {
    const stats = this.generator.stats();
    const { epoch, timeUnitMs } = this.layout;
    const lastTimestampMs = stats.lastTimestamp < 0 ? null : epoch + stats.lastTimestamp * timeUnitMs;
    const nowMs = this.settings.clock.now();
    const lease = this.source?.leaseStatus();
    const mustExceedMs = Math.max(lastTimestampMs ?? -Infinity, lease?.floorMs ?? -Infinity);
    return {
      ...stats,
      source: this.settings.worker.kind,
      ready: this.assigned && !this.stopped && (lease === undefined || (lease.state === 'held' && lease.clockInSync)),
      workerId: this.assigned ? this.generator.workerId : null,
      datacenterId: this.assigned ? this.generator.datacenterId : null,
      lastTimestampMs,
      clockBehindMs: Number.isFinite(mustExceedMs) ? Math.max(0, mustExceedMs - nowMs) : 0,
      nowMs,
      lease,
    };
  }

  private sourceContext(): WorkerSourceContext {
    return {
      layout: this.layout,
      clock: this.settings.clock,
      logger: this.logger,
      lastTimestamp: () => this.generator.stats().lastTimestamp,
      reassign: (assignment) => {
        if (this.stopped) return;
        if (assignment === null) {
          this.assigned = false;
          this.generator.assign(
            this.generator.workerId,
            this.generator.datacenterId,
            this.generator.stats().lastTimestamp,
            blockedPermit('switching'),
          );
        } else {
          this.applyAssignment(assignment);
        }
      },
    };
  }

  private applyAssignment(assignment: WorkerAssignment): void {
    this.generator.assign(assignment.workerId, assignment.datacenterId, assignment.floor, assignment.permit);
    this.assigned = true;
  }

  /** With a lease, a clock stepped back beyond the tolerance switches the worker ID instead of failing for good. */
  private translate(error: unknown): unknown {
    if (
      error instanceof ClockMovedBackError &&
      this.source?.requestSwitch(this.generator.stats().lastTimestamp, error.message)
    ) {
      return new WorkerUnavailableError(
        'switching',
        `The clock stands ${error.behindMs} ms behind the last issued ID, beyond the tolerance; switching to ` +
          'another worker ID. ' +
          'Retry in a moment, or use nextAsync(), which waits for the switch.',
      );
    }
    return error;
  }
}

function blockedPermit(reason: 'not-started' | 'stopped' | 'switching'): IssuePermit {
  const messages = {
    'not-started':
      'No worker ID is claimed yet: IDs are issued once the module has initialised (after app.init() or listen()).',
    stopped: 'The worker ID was released because the application is shutting down.',
    switching: 'The worker ID is being re-claimed or switched; retry in a moment, or use nextAsync(), which waits.',
  } as const;
  return {
    ceiling(): number {
      throw new WorkerUnavailableError(reason, messages[reason]);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isIncreasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}
