/**
 * Every error of the core, by family, from one place: the bases (`base.errors.ts`), what callers hand in
 * (`input.errors.ts`), time and the sequence (`clock.errors.ts`) and the worker ID (`worker.errors.ts`). Import from
 * here; the family files are where each class is written.
 */
export { SnowflakeError, TransientSnowflakeError } from './base.errors.js';
export {
  InvalidShardKeyError,
  InvalidSnowflakeError,
  ShardKeyMissingError,
  SnowflakeConfigError,
  UnsafeNumberError,
} from './input.errors.js';
export {
  BatchTooLargeError,
  ClockMovedBackError,
  SequenceExhaustedError,
  TimestampOverflowError,
} from './clock.errors.js';
export {
  WorkerIdInUseError,
  WorkerUnavailableError,
  WorkerWaitTimeoutError,
  type WorkerIdHolder,
  type WorkerUnavailableReason,
  type WorkerWaitReport,
} from './worker.errors.js';
