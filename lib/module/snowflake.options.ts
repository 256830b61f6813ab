import type { Clock } from '../core/clock.js';
import type { SequenceStart } from '../core/generator.options.js';
import type { LayoutOptions, LayoutPresetName } from '../core/layout.js';
import type { PublicIdOptions } from '../forms/public-id.form.js';
import type { RedisLeaseOptions } from '../lease/lease.options.js';
import type { WorkerIdSource } from '../worker/worker-source.js';

/**
 * The object form of {@link SnowflakeModuleOptions.ceilingFile}.
 *
 * @publicApi
 */
export interface CeilingFileOptions {
  /** The file; its directory must exist and be writable, on a disk that survives restarts. */
  path: string;
  /**
   * How far ahead of the clock each write puts the ceiling; the next write starts half a step before it is reached.
   * Longer steps write less often, and make a restart right after a crash wait longer. @default 5000
   */
  stepMs?: number;
  /**
   * The longest the start waits for the clock to pass the recorded ceiling before it fails with `CeilingFileError`.
   * @default stepMs + 1000 (a restart right after a crash, with 1 s of clock set back)
   */
  maxWaitMs?: number;
  /**
   * What a missing file means. `'refuse'` fails the start with `CeilingFileError` (`missing`): a volume that failed
   * to mount, or a mistyped path, looks exactly like a first start, and a first start issues with no floor at all.
   * `'create'` starts a new file: set it for the worker's very first start (for example from an environment variable
   * of the first deploy), or where the file's directory is known to be the persistent one.
   * @default 'refuse'
   */
  ifMissing?: 'refuse' | 'create';
}

/**
 * The object form of {@link SnowflakeModuleOptions.workerLock}.
 *
 * @publicApi
 */
export interface WorkerLockOptions {
  /**
   * The directory of the lock files, one per worker ID in use (`worker-<datacenter>-<worker>.lock`). Every process
   * that could run on the same worker ID must see the same directory, on a local disk.
   * @default `<os.tmpdir()>/nestjs-snowflake-locks`
   */
  dir?: string;
}

/**
 * Options of {@link SnowflakeModule}. Give exactly one worker-ID source: `workerId` (a number or `'hostname'`),
 * `redis` (a lease) or `workerSource` (your own).
 *
 * @publicApi
 */
export interface SnowflakeModuleOptions {
  /** A preset name or a full layout. @default 'default' (41 ms-bits from 2026, 10 worker bits, 12 sequence bits) */
  layout?: LayoutPresetName | LayoutOptions;
  /**
   * A fixed worker ID, or `'hostname'` to take the ordinal of a Kubernetes StatefulSet pod's host name,
   * `<name>-<ordinal>` (pod `api-3` is worker 3; any other host name fails at bootstrap). Leave it out when `redis`
   * leases the worker ID.
   */
  workerId?: number | 'hostname';
  /**
   * The datacenter ID. With a lease it is fixed per deployment (for example one Redis per region) and the lease
   * hands out worker bits only, unless `redis.allocateDatacenter` is set. @default 0
   */
  datacenterId?: number;
  /**
   * With a fixed `workerId` (a number or `'hostname'`): keep the worker's ceiling, the highest timestamp it may
   * issue, in this local file, written and fsynced ahead of use, so that a restart with the clock set back (or right
   * after a crash) issues only above what was issued before. A path, or `{ path, stepMs, maxWaitMs, ifMissing }`.
   * Every worker needs a file of its own, such as `/var/lib/app/snowflake-worker-3.json`; a process using it holds
   * a lock beside it (`<path>.lock`), and a missing file fails the start unless `ifMissing: 'create'`.
   */
  ceilingFile?: string | CeilingFileOptions;
  /**
   * With a fixed `workerId` (a number or `'hostname'`): the host-wide lock that stops a second process or worker
   * thread of this host (`node:cluster`, PM2 cluster mode, a second copy of the app) from starting on the same
   * worker ID, which would issue the same IDs. The lock is a file that dies with its holder: a process that exits,
   * crashes or is killed leaves nothing the next one waits for. `false` turns it off: only for processes whose IDs
   * never meet (tests), or where each process's worker ID is made distinct by other means.
   * @default { dir: `<os.tmpdir()>/nestjs-snowflake-locks` }
   */
  workerLock?: false | WorkerLockOptions;
  /** The host name `workerId: 'hostname'` reads. @default os.hostname() */
  hostname?: string;
  /** Lease the worker ID from Redis. */
  redis?: RedisLeaseOptions;
  /**
   * Your own worker-ID source (a lease in etcd, a database, a coordinator): it must keep the contract described on
   * {@link WorkerIdSource}, which `runWorkerSourceConformance` from `nestjs-snowflake/testing` checks.
   */
  workerSource?: WorkerIdSource;
  /**
   * How far the clock may step back before the generator refuses (or, with a lease, switches worker ID).
   * @default 1000 (with a lease: the lower of 1000 and `redis.fenceMarginMs / 2`)
   */
  clockBackToleranceMs?: number;
  /** The longest a synchronous `next()` may wait for the next time unit when the sequence runs out. @default 10 */
  maxSyncWaitMs?: number;
  /**
   * The longest an asynchronous call waits for a worker ID, in ms: `nextAsync()`, `nextBatchAsync()` (in total over
   * the batch), and the inserts of the TypeORM subscriber and the Prisma extension, which call them. Past it the call
   * rejects with `WorkerWaitTimeoutError` (503 over HTTP), which says what kept the worker ID away. A call may pass
   * its own `timeoutMs` and `signal`. `0` never waits for a worker ID. Waits for the next time unit do not count.
   * @default 5000 (a fenced lease renews within one `redis.renewIntervalMs` of Redis answering again; a settling
   * namespace, 12 s, is better answered with 503 and `Retry-After` than with a request held that long)
   */
  maxAsyncWaitMs?: number;
  /**
   * Where each time unit's sequence starts: `'random'` or `'rotating'` spread the low bits of IDs issued at low
   * traffic, so that `id % N` partitioning spreads rows; a unit then holds at least half its peak IDs.
   * @default 'zero'
   */
  sequenceStart?: SequenceStart;
  /** Require `nextNumber()` to work: fails at bootstrap unless the layout has 53 bits or fewer. @default false */
  requireSafeNumbers?: boolean;
  /** The wall clock, for tests. @default systemClock */
  clock?: Clock;
  /**
   * Public IDs for `IdService.toPublicId()` / `fromPublicId()`: opaque texts that hide time and volume, keyed with
   * `keys` (the first writes, all read). Validated at bootstrap.
   */
  publicIds?: PublicIdOptions;
}
