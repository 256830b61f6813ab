/**
 * `nestjs-snowflake/testing`: the conformance suite for worker-ID sources, and what apps need in their own tests (a
 * static-worker module and a manual clock). Free of any test runner: the suite returns named cases and results.
 */
export {
  conformanceCases,
  runWorkerSourceConformance,
  type ConformanceCase,
  type ConformanceResult,
  type WorkerSourceFactory,
} from './testing/conformance.js';
export { ManualClock } from './testing/manual-clock.js';
export { SourceHost, type IssuedId } from './testing/source-host.js';
export { SnowflakeTestingModule, type SnowflakeTestingOptions } from './testing/testing-module.js';
