import { hostname as osHostname } from 'node:os';
import { describeInput } from './describe-input.js';

/**
 * Base class of every error the library throws, so callers can catch them all with one `instanceof`.
 *
 * @publicApi
 */
export class SnowflakeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Base class of the errors that pass by themselves: the lease is being (re-)claimed, Redis is away, the clock or the
 * sequence catches up. Retrying later succeeds, so over HTTP they answer 503.
 *
 * They carry the shape of an `http-errors` error (`status`, `statusCode`, `expose`), which Nest's default exception
 * handler answers with its own status: an app that registered no filter answers 503 rather than 500, on Express and
 * Fastify alike. `expose` is false, so that the client sees "Service Unavailable" and not the message, which speaks of
 * the deployment (Redis addresses, option names). `SnowflakeExceptionFilter` adds `Retry-After`.
 *
 * @publicApi
 */
export class TransientSnowflakeError extends SnowflakeError {
  /** The HTTP status that fits: 503 Service Unavailable. */
  readonly status = 503;
  /** The same as `status`, as `http-errors` sets both. */
  readonly statusCode = 503;
  /** Whether a client may see the message: no, it names the deployment's parts. */
  readonly expose = false;
  /**
   * How long until a retry may succeed, when it is known (what is left of a namespace's settling), in ms;
   * `SnowflakeExceptionFilter` turns it into `Retry-After`.
   */
  readonly retryAfterMs?: number;

  constructor(message: string, retryAfterMs?: number) {
    super(message);
    if (retryAfterMs !== undefined) this.retryAfterMs = Math.max(0, Math.round(retryAfterMs));
  }
}

/**
 * Invalid module or layout options. Thrown once, at bootstrap, naming the option and the fix.
 *
 * @publicApi
 */
export class SnowflakeConfigError extends SnowflakeError {
  constructor(
    /** The option that is wrong, as a path such as `layout.sequenceBits`. */
    readonly option: string,
    message: string,
  ) {
    super(`Invalid snowflake option \`${option}\`: ${message}`);
  }
}

/**
 * An ID passed to `decode()` (or a part passed to `compose()`) that is not a valid ID of the layout.
 *
 * @publicApi
 */
export class InvalidSnowflakeError extends SnowflakeError {
  constructor(
    /** The rejected input, as given. */
    readonly input: unknown,
    reason: string,
    /** What the input was meant to be: an ID, or an instant to turn into ID bounds. */
    what: 'snowflake ID' | 'instant' = 'snowflake ID',
  ) {
    super(`Invalid ${what} ${describeInput(input)}: ${reason}`);
  }
}

/**
 * The clock stands further behind the last issued timestamp than the configured tolerance allows.
 * Issuing would either repeat IDs or push timestamps far into the future, so the generator refuses.
 *
 * @publicApi
 */
export class ClockMovedBackError extends TransientSnowflakeError {
  constructor(
    /** How far the clock stands behind the last issued timestamp, in milliseconds. */
    readonly behindMs: number,
    /** The tolerance that was exceeded, in milliseconds. */
    readonly toleranceMs: number,
    /**
     * How far ahead of the clock the refused ID's timestamp would have been: `behindMs`, or more when the sequence
     * of the last timestamp was used up and the next ID had to borrow the following time unit.
     */
    readonly aheadMs: number = behindMs,
  ) {
    super(
      (aheadMs > behindMs
        ? `The clock stands ${behindMs} ms behind the last issued ID, and the next ID would run ${aheadMs} ms ` +
          `ahead of it, more than the tolerance of ${toleranceMs} ms. `
        : `The clock moved back ${behindMs} ms, more than the tolerance of ${toleranceMs} ms. `) +
        'Check the host clock (NTP steps), raise `clockBackToleranceMs`, or use a Redis lease, ' +
        'which switches to another worker ID instead.',
    );
  }
}

/**
 * All sequence numbers of the current time unit are used and the next unit is further away than the
 * synchronous wait bound. Use `nextAsync()`, or a layout with more sequence bits or a shorter time unit.
 *
 * @publicApi
 */
export class SequenceExhaustedError extends TransientSnowflakeError {
  constructor(
    /** The milliseconds until the next time unit starts. */
    readonly waitMs: number,
    /** The synchronous wait bound, in milliseconds. */
    readonly maxWaitMs: number,
  ) {
    super(
      `All sequence numbers of this time unit are used and the next unit is ${waitMs} ms away ` +
        `(synchronous wait bound: ${maxWaitMs} ms). Use nextAsync(), raise \`maxSyncWaitMs\`, ` +
        'or choose a layout with more sequence bits or a shorter time unit.',
    );
  }
}

/**
 * A synchronous batch would need more time units than fit in the synchronous wait bound.
 *
 * @publicApi
 */
export class BatchTooLargeError extends SnowflakeError {
  constructor(
    /** The IDs asked for. */
    readonly count: number,
    /** The most one synchronous batch issues with this layout and `maxSyncWaitMs`. */
    readonly max: number,
    /** The synchronous wait bound, in milliseconds. */
    readonly maxWaitMs: number,
  ) {
    super(
      `nextBatch(${count}) asks for more IDs than this layout issues within the synchronous wait bound ` +
        `(${max} within ${maxWaitMs} ms), and would hold the event loop longer. Use nextBatchAsync(${count}), ` +
        'split the batch, or raise `maxSyncWaitMs`.',
    );
  }
}

/**
 * The timestamp field of the layout is full: the layout has run out of time.
 *
 * @publicApi
 */
export class TimestampOverflowError extends SnowflakeError {
  constructor(readonly lastDate: Date) {
    super(
      `The layout's timestamp field ran out on ${lastDate.toISOString()}. ` +
        'Choose a later epoch or more timestamp bits (this changes the ID format: plan a migration).',
    );
  }
}

/** Why a worker may not issue IDs right now. */
export type WorkerUnavailableReason =
  'not-started' | 'fenced' | 'lost' | 'switching' | 'stopped' | 'ceiling' | 'clock' | 'settling' | 'timeout';

/** What each reason means, and what to do about it: the message is built from these, never by hand. */
const UNAVAILABLE: Record<WorkerUnavailableReason, { what: string; advice: string }> = {
  'not-started': {
    what: 'No worker ID is claimed yet',
    advice: 'IDs are issued once the module has initialised (after app.init() or listen()).',
  },
  fenced: {
    what: 'The lease could not be renewed in time, so no IDs are issued under it',
    advice: 'It resumes once Redis answers again; check the connection to Redis.',
  },
  lost: {
    what: 'The lease on the worker ID was lost',
    advice: 'Another worker ID is being claimed; retry in a moment, or use nextAsync(), which waits.',
  },
  switching: {
    what: 'The worker ID is being re-claimed or switched',
    advice: 'Retry in a moment, or use nextAsync(), which waits.',
  },
  stopped: {
    what: 'The worker ID was released because the application is shutting down',
    advice: 'No IDs are issued after shutdown.',
  },
  ceiling: {
    what: "The clock ran past the ceiling (the lease's, or the ceiling file's) before it was raised",
    advice: 'Retry in a moment, or use nextAsync(), which waits for the raise.',
  },
  clock: {
    what: "The wall clock disagrees with the Redis server's clock by more than redis.maxClockOffsetMs",
    advice:
      'No IDs are issued until they agree again; check the time synchronisation (NTP) of this machine and of Redis.',
  },
  settling: {
    what: "Redis lost the namespace's data (restart, failover, flush or deleted keys)",
    advice: 'No worker ID is handed out until holders from before have stopped; retry in a moment, or use nextAsync().',
  },
  timeout: {
    what: 'No worker ID could be used within the wait bound',
    advice:
      'Retry later (over HTTP: 503 with Retry-After), pass a longer `timeoutMs` to this call, or raise ' +
      '`maxAsyncWaitMs`; the detail says why the worker ID was missing.',
  },
};

/**
 * The worker may not issue IDs right now: no worker ID is held, the lease lapsed, or it is being
 * switched. `reason` says which; the message, built from it, says what to do.
 *
 * @publicApi
 */
export class WorkerUnavailableError extends TransientSnowflakeError {
  constructor(
    /**
     * `clock`: the wall clock disagrees with the Redis server's by more than the lease allows (it stepped, or drifts);
     * `settling`: Redis lost the namespace's data and no worker ID is handed out until earlier holders have stopped.
     */
    readonly reason: WorkerUnavailableReason,
    /** What this occurrence adds: the worker ID, a measured offset, the last error. */
    readonly detail?: string,
    /** How long until a retry may succeed, when known (a namespace's settling), ms. */
    retryAfterMs?: number,
  ) {
    const { what, advice } = UNAVAILABLE[reason];
    super(`${what}${detail === undefined || detail === '' ? '' : ` (${detail})`}. ${advice}`, retryAfterMs);
  }
}

/**
 * What {@link WorkerWaitTimeoutError} reports of the wait that ran out.
 *
 * @publicApi
 */
export interface WorkerWaitReport {
  /** How long the call waited for a worker ID, ms. */
  waitedMs: number;
  /** The bound that ran out, ms. */
  limitMs: number;
  /** Where the bound came from: the call's `timeoutMs`, or the module option `maxAsyncWaitMs`. */
  limitFrom: 'timeoutMs' | 'maxAsyncWaitMs';
  /**
   * What kept the worker ID away when the bound ran out: the lease's state (`settling`, `fenced`, `lost`,
   * `claiming`, `switching`) with a Redis lease, otherwise the reason the generator refused (`ceiling`, …).
   */
  state: string;
  /** The last error the lease met claiming or renewing (Redis unreachable, a timeout), or null. */
  lastError: string | null;
  /** The rest of the explanation, in words: the worker ID, the failed renewals, settling left. */
  detail: string;
  /** How long until a retry may succeed, when known, ms. */
  retryAfterMs?: number;
}

/**
 * An asynchronous call (`nextAsync()`, `nextBatchAsync()`, an ORM insert) waited for a worker ID as long as it was
 * allowed (`maxAsyncWaitMs`, or the call's `timeoutMs`) and none came: the lease is settling, fenced or lost, or
 * Redis is unreachable. A `WorkerUnavailableError` with reason `timeout`, so a `catch` of that class catches it too;
 * over HTTP it answers 503.
 *
 * @publicApi
 */
export class WorkerWaitTimeoutError extends WorkerUnavailableError {
  declare readonly reason: 'timeout';
  readonly waitedMs: number;
  readonly limitMs: number;
  readonly limitFrom: WorkerWaitReport['limitFrom'];
  readonly state: string;
  readonly lastError: string | null;

  constructor(report: WorkerWaitReport) {
    const waited = Math.round(report.waitedMs);
    super(
      'timeout',
      `waited ${waited} ms of \`${report.limitFrom}\` ${report.limitMs} ms; worker ID ${report.state}: ` +
        report.detail +
        (report.lastError === null ? '' : `; last error: ${report.lastError}`),
      report.retryAfterMs,
    );
    this.waitedMs = waited;
    this.limitMs = report.limitMs;
    this.limitFrom = report.limitFrom;
    this.state = report.state;
    this.lastError = report.lastError;
  }
}

/**
 * `nextNumber()` was called (or configured) on a layout wider than 53 bits, whose IDs do not fit a JS number exactly.
 *
 * @publicApi
 */
export class UnsafeNumberError extends SnowflakeError {
  constructor(readonly layoutBits: number) {
    super(
      `IDs of this layout use ${layoutBits} bits, more than the 53 a JS number holds exactly. ` +
        'Use next() (bigint) or nextString(), or the `js-safe` preset.',
    );
  }
}

/**
 * Who holds a worker ID that another process or worker thread of this host uses: the lock file's record.
 *
 * @publicApi
 */
export interface WorkerIdHolder {
  pid: number;
  /** The holder's `worker_threads` thread (0: the main thread). */
  threadId: number;
  hostname: string;
  /** When the holder took the worker ID (ISO 8601). */
  startedAt: string;
  /** The lock file (option `workerLock.dir`). */
  lockFile: string;
}

/**
 * Two generators were given the same fixed worker ID: in one process (for example `SnowflakeModule.forRoot()`
 * imported in two modules with the same static `workerId`), or in two processes or worker threads of one host
 * (`node:cluster`, PM2 cluster mode, several copies of the app with one `workerId` or one host name). They would
 * issue the same IDs, so the second one refuses to start. `holder` names the other process when there is one.
 *
 * @publicApi
 */
export class WorkerIdInUseError extends SnowflakeError {
  constructor(
    readonly workerId: number,
    readonly datacenterId: number,
    /** The other process or thread holding it; absent when the holder is another module of this process. */
    readonly holder?: WorkerIdHolder,
  ) {
    super(
      holder === undefined
        ? `Worker ID ${workerId} (datacenter ${datacenterId}) is already used by another SnowflakeModule in this ` +
            'process: two generators on one worker ID issue the same IDs. Import SnowflakeModule.forRoot() once, ' +
            'with `isGlobal: true`, and inject IdService wherever it is needed (or give each registration its own ' +
            'worker ID).'
        : `Worker ID ${workerId} (datacenter ${datacenterId}) is held by process ${holder.pid}` +
            `${holder.threadId === 0 ? '' : ` (worker thread ${holder.threadId})`} on host ${holder.hostname}, ` +
            `since ${holder.startedAt} (lock file ${holder.lockFile}): two generators on one worker ID issue the ` +
            'same IDs. Give each process its own worker ID; for node:cluster, PM2 cluster mode or worker threads, ' +
            'which run one app per CPU, use a Redis lease (`redis`), which hands each its own. If these processes ' +
            'never share IDs (separate apps, or containers that share this directory), give each its own ' +
            '`workerLock.dir`.' +
            (holder.hostname === osHostname()
              ? ''
              : ' A lock written under another host name cannot be checked from here: if that host or container ' +
                'is gone, remove the lock file.'),
    );
  }
}

/**
 * A shard key that has no stable canonical form (a fraction, an unsafe number, an object, `null`), or a shard key
 * given to a layout without a shard field. See `ShardKey` for the keys that are taken and how each is hashed.
 *
 * @publicApi
 */
export class InvalidShardKeyError extends SnowflakeError {
  constructor(
    /** The rejected key, as given. */
    readonly key: unknown,
    reason: string,
  ) {
    super(`Invalid shard key ${describeKey(key)}: ${reason}`);
  }
}

/**
 * A row whose ID takes its shard from another property (`@GeneratedId({ shardFrom })`, the Prisma extension's
 * `shardFrom`) reached an insert without that property. Its ID would silently land in shard 0, away from the other
 * rows of its key, so the insert fails instead.
 *
 * @publicApi
 */
export class ShardKeyMissingError extends SnowflakeError {
  constructor(
    /** The entity or model, as `Entity.property`, whose ID was to be filled. */
    readonly target: string,
    /** The property that gives the shard key. */
    readonly shardFrom: string,
    advice: string,
  ) {
    super(`Cannot fill ${target}: its shard comes from \`${shardFrom}\`, which the row does not set. ${advice}`);
  }
}

function describeKey(key: unknown): string {
  if (key === null || key === undefined) return String(key);
  if (typeof key === 'object') return key instanceof Uint8Array ? 'bytes' : `(${key.constructor?.name ?? 'object'})`;
  return `${describeInput(key)} (${typeof key})`;
}
