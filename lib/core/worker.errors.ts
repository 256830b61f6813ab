/** Errors of the worker ID: none may be used right now, the wait for one ran out, or another process holds it. */
import { hostname as osHostname } from 'node:os';
import { SnowflakeError, TransientSnowflakeError } from './base.errors.js';

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
  /**
   * Linux: where the holder runs when its pid means nothing here. `pid-namespace`: another PID namespace of this host
   * (a container sharing the lock directory and the host name), judged by the socket it listens on beside the lock.
   * `machine`: another machine with the same host name (a lock directory shared over the network), which nothing
   * here can check.
   */
  elsewhere?: 'pid-namespace' | 'machine';
}

/**
 * Two generators were given the same fixed worker ID: in one process (for example `SnowflakeModule.forRoot()`
 * imported in two modules with the same static `workerId`), or in two processes or worker threads of one host
 * (`node:cluster`, PM2 cluster mode, several copies of the app with one `workerId` or one host name). They would
 * issue the same IDs, so the second one refuses to start. `holder` names the other process when there is one.
 *
 * @publicApi
 */
/** Said of a lock holder whose pid means nothing here, by where it runs. @internal */
export const HOLDER_ELSEWHERE = {
  'pid-namespace':
    ' That process runs in another PID namespace (a container sharing this directory and host name), so its pid ' +
    'cannot be checked from here: its lock is taken over once the socket it listens on beside the lock refuses a ' +
    'connection (a holder without one keeps the lock: remove the lock file once that container is gone).',
  machine:
    ' That process runs on another machine with the same host name (it took the lock since this host booted, under ' +
    'another boot ID: the directory is shared over the network), which nothing here can check: give each machine a ' +
    'lock directory and worker IDs of its own, and remove the lock file once that process is gone.',
} as const;

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
                'is gone, remove the lock file.') +
            (holder.elsewhere === undefined ? '' : HOLDER_ELSEWHERE[holder.elsewhere]),
    );
  }
}
