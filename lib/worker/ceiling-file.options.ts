/**
 * Where a fixed worker ID keeps its ceiling between runs (option `ceilingFile`): a small JSON file on local disk.
 *
 * @publicApi
 */
export interface CeilingFileOptions {
  /**
   * The file, one per worker ID (put the worker ID in its name). Its directory must exist and be writable; the
   * file itself is created on the first start. A relative path is resolved against the working directory.
   */
  path: string;
  /**
   * How far ahead of the clock the ceiling is written. The file is raised again (one write and fsync, off the
   * issuing path) when the clock comes within half of this of the ceiling, and a restart after a crash may wait up
   * to this long for the clock to pass the ceiling.
   * @default 5000
   */
  aheadMs?: number;
  /**
   * How long a start waits for the clock to pass the ceiling the previous run left; beyond it the start fails with
   * `CeilingAheadOfClockError`. Keep it above `aheadMs`, so that a restart after a crash waits instead of failing.
   * @default 10000
   */
  maxWaitMs?: number;
}

/** The defaults of {@link CeilingFileOptions}, written once. @internal */
export const CEILING_FILE_DEFAULTS = Object.freeze({ aheadMs: 5000, maxWaitMs: 10_000 });
