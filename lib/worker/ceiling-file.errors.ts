import { SnowflakeError } from '../core/errors.js';

/**
 * Base class of the errors of a worker's ceiling file (option `ceilingFile`); `file` is its absolute path.
 *
 * @publicApi
 */
export class CeilingFileError extends SnowflakeError {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
  }
}

/** What never to do with a ceiling file, said wherever a fix might tempt someone to. */
const DO_NOT_DELETE =
  'Do not delete it to get going: it records the highest timestamp this worker may have issued, and a start ' +
  'without it can repeat IDs while the clock stands behind that.';

/**
 * The ceiling file cannot be read as one this library wrote: not JSON, a field missing or of the wrong type, or
 * written by a newer version. It is never ignored, since the ceiling in it is what keeps a restart from repeating IDs.
 *
 * @publicApi
 */
export class CeilingFileCorruptError extends CeilingFileError {
  constructor(
    file: string,
    /** What is wrong with it. */
    readonly problem: string,
  ) {
    super(
      file,
      `The ceiling file ${file} is not a valid ceiling file (${problem}). ${DO_NOT_DELETE} Restore it from a ` +
        'backup, or move it away only once the clock is past every ID this worker issued (decode the newest one ' +
        'in your data with `npx nestjs-snowflake decode <id>`), or point `ceilingFile` to a path of its own.',
    );
  }
}

/** The worker and layout a ceiling file belongs to. @publicApi */
export interface CeilingFileOwner {
  workerId: number;
  datacenterId: number;
  /** The layout's defining fields, as written in the file. */
  layout: Record<string, number>;
}

/**
 * The ceiling file belongs to another worker ID, datacenter or layout: two workers sharing one file would raise
 * each other's ceilings and read the wrong floor, and a ceiling of another layout means nothing in this one.
 *
 * @publicApi
 */
export class CeilingFileForeignError extends CeilingFileError {
  constructor(
    file: string,
    /** Whom the file belongs to. */
    readonly found: CeilingFileOwner,
    /** Whom this process would have it belong to. */
    readonly expected: CeilingFileOwner,
  ) {
    super(
      file,
      `The ceiling file ${file} belongs to ${describeOwner(found)}, but this process runs ${describeOwner(expected)}. ` +
        'Give every worker ID a file of its own (put the worker ID in its name). If the layout changed on purpose, ' +
        'the old ceiling means nothing in the new one: move the file away once the clock is past it.',
    );
  }
}

/**
 * At start, the clock stands further behind the ceiling the previous run of this worker left than `maxWaitMs`:
 * issuing now could repeat IDs that run issued. Nothing was issued and the file was left as it was.
 *
 * @publicApi
 */
export class CeilingAheadOfClockError extends CeilingFileError {
  constructor(
    file: string,
    /** How long the clock would have to run to pass the ceiling, in ms. */
    readonly behindMs: number,
    /** The wait bound that was exceeded, in ms. */
    readonly maxWaitMs: number,
    /** The ceiling, as a date. */
    readonly ceilingAt: Date,
  ) {
    super(
      file,
      `The clock stands ${behindMs} ms behind the ceiling in ${file} (${ceilingAt.toISOString()}), which the ` +
        `previous run of this worker may have issued up to; that is longer than \`ceilingFile.maxWaitMs\` ` +
        `(${maxWaitMs} ms). Check the host clock (NTP) and start again once it is right, raise ` +
        `\`ceilingFile.maxWaitMs\` to wait it out, or run under another worker ID. ${DO_NOT_DELETE}`,
    );
  }
}

/**
 * The ceiling file could not be read or written (a missing directory, no permission, a full disk). At start this
 * fails the bootstrap; while running, IDs go on up to the ceiling already written, and the raise is retried.
 *
 * @publicApi
 */
export class CeilingFileAccessError extends CeilingFileError {
  constructor(
    file: string,
    /** What failed. */
    readonly operation: 'read' | 'write',
    /** The system error code, such as `ENOENT` or `EACCES`, when there is one. */
    readonly code: string | undefined,
    reason: string,
  ) {
    super(
      file,
      `Could not ${operation} the ceiling file ${file}: ${reason}. ` +
        (code === 'ENOENT'
          ? 'Create its directory, or point `ceilingFile` to a directory that exists.'
          : code === 'ENOSPC'
            ? 'Free some space on its disk.'
            : 'Check that the directory exists and that the process may read and write in it.'),
    );
  }
}

function describeOwner(owner: CeilingFileOwner): string {
  const layout = Object.entries(owner.layout)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');
  return `worker ${owner.workerId} of datacenter ${owner.datacenterId} (layout: ${layout})`;
}
