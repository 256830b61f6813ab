import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';

/**
 * Node's test environment, with a temp directory per Jest worker process. Apps on a fixed worker ID hold a host
 * lock on it under the temp directory (option `workerLock`), and test files that Jest runs side by side in other
 * worker processes boot apps on the same worker IDs: each worker, with the child processes its tests spawn, is a
 * host of its own. Set on the real process (a test's `process.env` is a copy), before any test file runs.
 */
export default class PerWorkerTmpdirEnvironment extends TestEnvironment {
  constructor(config, context) {
    // Before super(), which copies the environment variables into the test's `process.env`.
    const base = process.env.SNOWFLAKE_TEST_TMPDIR_BASE ?? tmpdir();
    process.env.SNOWFLAKE_TEST_TMPDIR_BASE = base;
    const dir = join(base, `nestjs-snowflake-jest-${process.env.JEST_WORKER_ID ?? '1'}`);
    mkdirSync(dir, { recursive: true });
    process.env.TMPDIR = dir;
    super(config, context);
  }
}
