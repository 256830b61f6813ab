import { describeInput } from '../core/describe-input.js';
import { hostname as osHostname } from 'node:os';
import { DEFAULTS } from '../core/defaults.js';
import { checkClock, systemClock, type Clock } from '../core/clock.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { SnowflakeConfigError } from '../core/errors.js';
import { checkNodeFitsLayout, resolveLayout, type Layout } from '../core/layout.js';
import { createPublicIdForm, type PublicIdForm } from '../forms/public-id.form.js';
import { nonNegativeOption, rejectPrototypeKeys, rejectUnknownKeys } from '../core/option-checks.js';
import { resolveLeaseSettings, type LeaseSettings } from '../lease/lease.settings.js';
import type { CeilingFileSettings } from '../worker/ceiling-file.source.js';
import { workerIdFromHostname } from '../worker/static.source.js';
import { defaultWorkerLockDir, type WorkerLockSettings } from '../worker/worker-lock.js';
import { DEFAULT_MAX_ASYNC_WAIT_MS } from '../worker/issue-wait.js';
import type { CeilingFileOptions, SnowflakeModuleOptions, WorkerLockOptions } from './snowflake.options.js';
import { sequenceStartOption, type SequenceStart } from '../core/generator.options.js';

/** Module options after validation, with every default filled in. @internal */
export interface SnowflakeSettings {
  layout: Layout;
  clock: Clock;
  clockBackToleranceMs: number;
  maxSyncWaitMs: number;
  /** The bound of asynchronous waits for a worker ID. */
  maxAsyncWaitMs: number;
  sequenceStart?: SequenceStart;
  datacenterId: number;
  worker:
    | { kind: 'static' | 'hostname'; workerId: number; ceilingFile?: CeilingFileSettings; lock: WorkerLockSettings }
    | { kind: 'redis'; lease: LeaseSettings }
    | { kind: 'custom'; source: WorkerIdSource };
  /** The public-ID form, when `publicIds` is set. */
  publicIds?: PublicIdForm;
}

/** Every option of {@link SnowflakeModuleOptions}, and the module builder's `isGlobal`. */
const MODULE_OPTION_KEYS: readonly string[] = Object.keys({
  layout: 0,
  workerId: 0,
  datacenterId: 0,
  hostname: 0,
  ceilingFile: 0,
  workerLock: 0,
  redis: 0,
  workerSource: 0,
  clockBackToleranceMs: 0,
  maxSyncWaitMs: 0,
  maxAsyncWaitMs: 0,
  sequenceStart: 0,
  requireSafeNumbers: 0,
  clock: 0,
  publicIds: 0,
  isGlobal: 0,
} satisfies Record<keyof SnowflakeModuleOptions | 'isGlobal', 0>);

/**
 * Validates module options once, at bootstrap. Every error names the option and the fix.
 *
 * @internal
 */
export function resolveSettings(options: SnowflakeModuleOptions | undefined): SnowflakeSettings {
  const settings = resolveIssueSettings(options);
  // Checked here too, so that a wrong value fails with the other options, before any worker ID is claimed.
  const sequenceStart = sequenceStartOption(options!.sequenceStart);
  const maxAsyncWaitMs = resolveMaxAsyncWait(options!.maxAsyncWaitMs);
  const publicIds = options?.publicIds;
  if (publicIds === undefined) return { ...settings, maxAsyncWaitMs, sequenceStart };
  return {
    ...settings,
    maxAsyncWaitMs,
    sequenceStart,
    publicIds: createPublicIdForm(publicIds, settings.layout, settings.clock, 'publicIds.'),
  };
}

/** The settings of issuing IDs: layout, clock and worker-ID source. */
function resolveIssueSettings(options: SnowflakeModuleOptions | undefined): Omit<SnowflakeSettings, 'maxAsyncWaitMs'> {
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('options', 'expected an object, such as { workerId: 1 } or { redis: { url } }.');
  }
  rejectPrototypeKeys('', options, 'SnowflakeModule');
  rejectUnknownKeys('', options, MODULE_OPTION_KEYS, 'SnowflakeModule');
  const layout = resolveLayout(options.layout);
  const clock = checkClock(options.clock ?? systemClock);
  const maxSyncWaitMs = nonNegativeOption('maxSyncWaitMs', options.maxSyncWaitMs, DEFAULTS.maxSyncWaitMs);
  if (options.requireSafeNumbers !== undefined && typeof options.requireSafeNumbers !== 'boolean') {
    throw new SnowflakeConfigError(
      'requireSafeNumbers',
      `expected true or false, got ${describeInput(options.requireSafeNumbers)}.`,
    );
  }
  if (options.requireSafeNumbers === true && layout.totalBits > 53) {
    throw new SnowflakeConfigError(
      'requireSafeNumbers',
      `the layout has ${layout.totalBits} bits, more than the 53 a JS number holds exactly. Use the 'js-safe' preset or a layout of 53 bits or fewer.`,
    );
  }

  const hasWorker = options.workerId !== undefined;
  const hasRedis = options.redis !== undefined;
  if (options.ceilingFile !== undefined && !hasWorker) {
    throw new SnowflakeConfigError(
      'ceilingFile',
      "keeps the ceiling of a fixed worker ID: give it with `workerId` (a number or 'hostname'). A Redis lease keeps " +
        'its ceiling in Redis, and a `workerSource` keeps its own.',
    );
  }
  if (options.workerLock !== undefined && !hasWorker) {
    throw new SnowflakeConfigError(
      'workerLock',
      "guards a fixed worker ID on this host: give it with `workerId` (a number or 'hostname'). A Redis lease hands " +
        'each process its own worker ID, and a `workerSource` keeps its own exclusivity.',
    );
  }
  const ceilingFile = options.ceilingFile === undefined ? undefined : resolveCeilingFile(options.ceilingFile);
  const lock = resolveWorkerLock(options.workerLock);
  if (options.workerSource !== undefined) {
    if (hasWorker || hasRedis) {
      throw new SnowflakeConfigError(
        'workerSource',
        `give one worker-ID source: \`workerSource\` chooses the worker ID, so leave \`${hasWorker ? 'workerId' : 'redis'}\` out.`,
      );
    }
    const source = options.workerSource;
    for (const method of ['start', 'stop', 'requestSwitch', 'whenReady'] as const) {
      if (typeof (source as unknown as Record<string, unknown>)?.[method] !== 'function') {
        throw new SnowflakeConfigError('workerSource', `expected a WorkerIdSource with a ${method}() method.`);
      }
    }
    const clockBackToleranceMs = nonNegativeOption(
      'clockBackToleranceMs',
      options.clockBackToleranceMs,
      DEFAULTS.clockBackToleranceMs,
    );
    const datacenterId = options.datacenterId ?? 0;
    checkNodeFitsLayout(layout, datacenterId, 0);
    return { layout, clock, clockBackToleranceMs, maxSyncWaitMs, datacenterId, worker: { kind: 'custom', source } };
  }
  if (hasWorker === hasRedis) {
    throw new SnowflakeConfigError(
      'workerId',
      hasWorker
        ? 'give either `workerId` or `redis`, not both: with `redis` the lease chooses the worker ID.'
        : "no worker-ID source: set `workerId` (a number, or 'hostname' for StatefulSet pods), `redis` (a lease, for any number of instances) or `workerSource` (your own).",
    );
  }

  if (hasRedis) {
    const lease = resolveLeaseSettings(options.redis!, layout, options.clockBackToleranceMs);
    const { clockBackToleranceMs } = lease;
    if (lease.allocateDatacenter && options.datacenterId !== undefined) {
      throw new SnowflakeConfigError(
        'datacenterId',
        'with `redis.allocateDatacenter` the lease hands out datacenter and worker bits together; leave `datacenterId` out.',
      );
    }
    const datacenterId = options.datacenterId ?? 0;
    checkNodeFitsLayout(layout, datacenterId, 0);
    return { layout, clock, clockBackToleranceMs, maxSyncWaitMs, datacenterId, worker: { kind: 'redis', lease } };
  }

  const clockBackToleranceMs = nonNegativeOption(
    'clockBackToleranceMs',
    options.clockBackToleranceMs,
    DEFAULTS.clockBackToleranceMs,
  );
  const datacenterId = options.datacenterId ?? 0;
  if (options.workerId === 'hostname') {
    const workerId = workerIdFromHostname(options.hostname ?? osHostname());
    checkNodeFitsLayout(layout, datacenterId, workerId);
    return {
      layout,
      clock,
      clockBackToleranceMs,
      maxSyncWaitMs,
      datacenterId,
      worker: { kind: 'hostname', workerId, ceilingFile, lock },
    };
  }
  if (typeof options.workerId !== 'number') {
    throw new SnowflakeConfigError(
      'workerId',
      `expected a non-negative integer or 'hostname', got ${describeInput(options.workerId)}.`,
    );
  }
  checkNodeFitsLayout(layout, datacenterId, options.workerId);
  return {
    layout,
    clock,
    clockBackToleranceMs,
    maxSyncWaitMs,
    datacenterId,
    worker: { kind: 'static', workerId: options.workerId, ceilingFile, lock },
  };
}

/**
 * The bound of asynchronous waits: finite, so that no request waits without end by default; a call that may wait as
 * long as it takes says so itself (`timeoutMs: Infinity`).
 */
function resolveMaxAsyncWait(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_ASYNC_WAIT_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new SnowflakeConfigError(
      'maxAsyncWaitMs',
      `expected a non-negative, finite number of milliseconds (such as ${DEFAULT_MAX_ASYNC_WAIT_MS}), got ` +
        `${describeInput(value)}. A call that may wait as long as it takes passes \`{ timeoutMs: Infinity }\` itself.`,
    );
  }
  return value;
}

const CEILING_FILE_KEYS: readonly string[] = Object.keys({
  path: 0,
  stepMs: 0,
  maxWaitMs: 0,
  ifMissing: 0,
} satisfies Record<keyof CeilingFileOptions, 0>);

function resolveCeilingFile(option: string | CeilingFileOptions): CeilingFileSettings {
  const given: CeilingFileOptions = typeof option === 'string' ? { path: option } : option;
  if (given === null || typeof given !== 'object') {
    throw new SnowflakeConfigError(
      'ceilingFile',
      'expected a file path, or { path, stepMs?, maxWaitMs?, ifMissing? }.',
    );
  }
  rejectUnknownKeys('ceilingFile', given, CEILING_FILE_KEYS, 'the ceiling file (`ceilingFile`)');
  if (typeof given.path !== 'string' || given.path.trim() === '') {
    throw new SnowflakeConfigError(
      typeof option === 'string' ? 'ceilingFile' : 'ceilingFile.path',
      `expected the path of a file, such as '/var/lib/app/snowflake-worker-3.json', got ${describeInput(given.path)}.`,
    );
  }
  const stepMs = nonNegativeOption('ceilingFile.stepMs', given.stepMs, 5000);
  if (stepMs < 100) {
    throw new SnowflakeConfigError(
      'ceilingFile.stepMs',
      `must be at least 100 ms, got ${stepMs}: each step costs a write and two fsyncs.`,
    );
  }
  const ifMissing = given.ifMissing ?? 'refuse';
  if (ifMissing !== 'refuse' && ifMissing !== 'create') {
    throw new SnowflakeConfigError(
      'ceilingFile.ifMissing',
      `expected 'refuse' (the default: a missing file fails the start) or 'create' (a missing file is this ` +
        `worker's first start), got ${JSON.stringify(given.ifMissing)}.`,
    );
  }
  return {
    path: given.path,
    stepMs,
    maxWaitMs: nonNegativeOption('ceilingFile.maxWaitMs', given.maxWaitMs, stepMs + 1000),
    ifMissing,
  };
}

const WORKER_LOCK_KEYS: readonly string[] = Object.keys({ dir: 0 } satisfies Record<keyof WorkerLockOptions, 0>);

function resolveWorkerLock(option: false | WorkerLockOptions | undefined): WorkerLockSettings {
  if (option === undefined) return { dir: defaultWorkerLockDir() };
  if (option === false) return null;
  if (option === null || typeof option !== 'object') {
    throw new SnowflakeConfigError(
      'workerLock',
      `expected false or { dir? }, got ${JSON.stringify(option)}. Leave it out for the default lock directory.`,
    );
  }
  rejectUnknownKeys('workerLock', option, WORKER_LOCK_KEYS, 'the worker lock (`workerLock`)');
  if (option.dir === undefined) return { dir: defaultWorkerLockDir() };
  if (typeof option.dir !== 'string' || option.dir.trim() === '') {
    throw new SnowflakeConfigError(
      'workerLock.dir',
      `expected the path of a directory, such as '/run/app/snowflake-locks', got ${JSON.stringify(option.dir)}.`,
    );
  }
  return { dir: option.dir };
}
