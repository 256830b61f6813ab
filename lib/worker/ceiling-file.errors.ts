import { SnowflakeError } from '../core/errors.js';

/**
 * Why a worker's ceiling file stopped the start: `corrupt` (not a ceiling file this library wrote, or cut short),
 * `foreign` (written for another worker, datacenter or layout), `clock-behind` (the clock stands further behind the
 * recorded ceiling than the wait allows), `unwritable` (the ceiling could not be written and synced), `missing` (no
 * file, and `ceilingFile.ifMissing` is not `'create'`), `in-use` (another process or worker thread holds the file's
 * lock).
 *
 * @publicApi
 */
export type CeilingFileProblem = 'corrupt' | 'foreign' | 'clock-behind' | 'unwritable' | 'missing' | 'in-use';

/**
 * The ceiling file of a static worker ID (option `ceilingFile`) forbids starting: the IDs issued before the restart
 * would not be known to be below the next ones. Never ignored: a file that cannot be read as this worker's ceiling
 * stops the start, naming the file and the fix.
 *
 * @publicApi
 */
export class CeilingFileError extends SnowflakeError {
  constructor(
    /** The ceiling file. */
    readonly file: string,
    readonly problem: CeilingFileProblem,
    detail: string,
  ) {
    super(`Ceiling file ${file}: ${detail}`);
  }
}
