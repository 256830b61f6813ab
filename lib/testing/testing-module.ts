import { SnowflakeModule } from '../module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../module/snowflake.options.js';
import { ManualClock } from './manual-clock.js';

/** Options of {@link SnowflakeTestingModule.forRoot}: a static worker and a clock the test controls. */
export interface SnowflakeTestingOptions extends Pick<SnowflakeModuleOptions, 'layout' | 'datacenterId' | 'publicIds'> {
  /** @default 0 */
  workerId?: number;
  /** @default a ManualClock on the real time */
  clock?: ManualClock;
  /** Register `IdService` globally, as most apps do. @default true */
  isGlobal?: boolean;
  /**
   * Stand in for a named registration (`@InjectIdService(name)`); give each its own `workerId`.
   * @default the default registration
   */
  name?: string;
}

/**
 * What an app's own tests need in place of its production registration: `IdService` on a static worker ID (no
 * Redis, no host lock), with a clock the test can fix, step and advance.
 *
 * @example
 * const clock = new ManualClock({ fixedAt: new Date('2026-01-01') });
 * Test.createTestingModule({ imports: [SnowflakeTestingModule.forRoot({ clock })], … })
 *
 * @publicApi
 */
export class SnowflakeTestingModule {
  static forRoot(options: SnowflakeTestingOptions = {}) {
    const { workerId = 0, clock = new ManualClock(), isGlobal = true, ...rest } = options;
    // No host lock: test runners run test files in parallel processes, each with its own app on this worker ID, and
    // IDs of a test's app never meet another's.
    return SnowflakeModule.forRoot({ ...rest, workerId, clock, isGlobal, workerLock: false });
  }
}
