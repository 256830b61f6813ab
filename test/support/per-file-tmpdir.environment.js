import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';

/**
 * Node's test environment, with a temp directory per test file. Apps on a fixed worker ID hold a host lock on it
 * under the temp directory (option `workerLock`), and test files boot apps on the same worker IDs: side by side in
 * other Jest worker processes, and one after another in the same one, where a file whose bootstrap failed half-way
 * may leave its lock held by the worker process. Each test file, with the child processes it spawns, is a host of
 * its own. The directories sit under one per Jest run (jest.config.js sets SNOWFLAKE_TEST_TMPDIR_BASE), so runs
 * side by side do not meet either. Set on the real process (a test's `process.env` is a copy), before the file runs.
 */
export default class PerFileTmpdirEnvironment extends TestEnvironment {
  constructor(config, context) {
    // Before super(), which copies the environment variables into the test's `process.env`.
    const base = process.env.SNOWFLAKE_TEST_TMPDIR_BASE ?? tmpdir();
    process.env.SNOWFLAKE_TEST_TMPDIR_BASE = base;
    mkdirSync(base, { recursive: true });
    process.env.TMPDIR = mkdtempSync(join(base, `nestjs-snowflake-jest-${process.env.JEST_WORKER_ID ?? '1'}-`));
    super(config, context);
  }
}
