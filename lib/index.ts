export { systemClock, type Clock } from './core/clock.js';
export { SnowflakeCodec, parseId, type ComposeInput, type SnowflakeParts } from './core/codec.js';
export {
  ClockMovedBackError,
  InvalidShardKeyError,
  InvalidSnowflakeError,
  SequenceExhaustedError,
  ShardKeyMissingError,
  BatchTooLargeError,
  SnowflakeConfigError,
  SnowflakeError,
  TimestampOverflowError,
  UnsafeNumberError,
  WorkerIdInUseError,
  type WorkerIdHolder,
  TransientSnowflakeError,
  WorkerUnavailableError,
  type WorkerUnavailableReason,
  WorkerWaitTimeoutError,
  type WorkerWaitReport,
} from './core/errors.js';
export { UnknownGeneratorError } from './core/generator-name.errors.js';
export type { SnowflakeIdForm } from './core/id-form.js';
export { InvalidPublicIdError, InvalidSnowflakeTextError } from './forms/form.errors.js';
export { formatId, parseIdText } from './forms/format.js';
export {
  publicIdForm,
  type PublicIdForm,
  type PublicIdFormOptions,
  type PublicIdOptions,
} from './forms/public-id.form.js';
export { base32Form, base62Form, decimalForm, type TextFormOptions } from './forms/radix.form.js';
export { SnowflakeGenerator } from './core/generator.js';
export {
  type GeneratorOptions,
  type GeneratorStats,
  type NextIdOptions,
  type SequenceStart,
} from './core/generator.options.js';
export {
  DEFAULT_EPOCH,
  LAYOUT_PRESETS,
  checkNodeFitsLayout,
  resolveLayout,
  type Layout,
  type LayoutOptions,
  type LayoutPresetName,
  type TimeUnitMs,
} from './core/layout.js';
export type { IssuePermit } from './core/permit.js';
export { shardKeyHash, shardOfKey, type ShardKey } from './core/shard-key.js';
export {
  ClockOutOfSyncError,
  LeaseConfigMismatchError,
  LeaseExhaustedError,
  LeaseLayoutChangeError,
  RedisUnavailableError,
} from './lease/lease.errors.js';
export type { RedisClientLike, RedisLeaseOptions } from './lease/lease.options.js';
export type { LeaseCapacity, LeaseStatus } from './lease/lease.status.js';
export {
  observesRenewals,
  type LeaseRenewalListener,
  type LeaseRenewalSample,
  type ObservesRenewals,
} from './lease/renewal-observers.js';
export { appPublicIdForm } from './module/app-public-id.form.js';
export { IdService, type SnowflakeStatus } from './module/id.service.js';
export { SnowflakeModule } from './module/snowflake.module.js';
export type { SnowflakeRegistrationExtras } from './module/snowflake.module-definition.js';
export { DuplicateGeneratorNameError } from './module/snowflake.errors.js';
export { InjectIdService, getIdServiceToken } from './module/snowflake.names.js';
export type { CeilingFileOptions, SnowflakeModuleOptions, WorkerLockOptions } from './module/snowflake.options.js';
export { DEFAULT_GENERATOR_NAME, SNOWFLAKE_WORKER_SOURCE } from './module/snowflake.tokens.js';
export { CeilingFileError, type CeilingFileProblem } from './worker/ceiling-file.errors.js';
export type { AsyncIdOptions, WaitOptions } from './worker/issue-wait.js';
export { workerIdFromHostname } from './worker/static.source.js';
export type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from './worker/worker-source.js';

// Old names and homes, kept for one release (see CHANGELOG): the HTTP and JSON helpers now live in
// `nestjs-snowflake/http`.
export {
  BigIntSerializerInterceptor,
  ParseSnowflakeIdPipe,
  SNOWFLAKE_GENERATOR,
  SnowflakeExceptionFilter,
  SnowflakeIdParam,
  SnowflakeIdQuery,
  assertNodeFits,
  bigintsToStrings,
  format,
  parse,
  snowflakeJsonReplacer,
  type ParseSnowflakeIdPipeOptions,
} from './deprecated.js';
