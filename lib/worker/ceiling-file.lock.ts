import { CeilingFileError } from './ceiling-file.errors.js';
import { takeHostLock } from './host-lock.js';
import { HOLDER_ELSEWHERE } from '../core/worker.errors.js';
import { describeHolder, holderElsewhere } from './lock-holder.js';

/**
 * Takes the lock of a ceiling file, `<path>.lock` beside it, for as long as a generator uses the file: two
 * processes writing one worker's ceiling would each issue below the other's, whatever worker ID they were given.
 *
 * @returns the release function, for shutdown
 * @throws CeilingFileError `in-use` naming the holder, or `unwritable` when the lock cannot be written
 */
export async function lockCeilingFile(file: string, workerId: number, datacenterId: number): Promise<() => void> {
  const path = `${file}.lock`;
  let outcome;
  try {
    outcome = await takeHostLock(path, { ceilingFile: file, workerId, datacenterId });
  } catch (error) {
    throw new CeilingFileError(
      file,
      'unwritable',
      `its lock ${path} could not be taken (${(error as Error).message}). Check that its directory exists and is ` +
        'writable by this process, on a local disk that survives restarts.',
    );
  }
  if (outcome.kind === 'taken') return outcome.release;
  if (outcome.kind === 'unreadable') {
    throw new CeilingFileError(
      file,
      'in-use',
      `its lock ${path} is not one nestjs-snowflake wrote (${outcome.reason}). Remove it if nothing else uses it.`,
    );
  }
  const where = outcome.here ? undefined : holderElsewhere(outcome.holder);
  throw new CeilingFileError(
    file,
    'in-use',
    `is in use by ${outcome.here ? 'another SnowflakeModule of this process' : describeHolder(outcome.holder)} ` +
      `(lock ${path}): two generators on one ceiling file issue the same IDs. Give each worker a file of its own ` +
      '(put the worker ID in its name, such as /var/lib/app/snowflake-worker-3.json) and each process its own ' +
      'worker ID. If that process is gone and the lock names another host (a container replaced under a new host ' +
      `name), remove the lock file.${where === undefined ? '' : HOLDER_ELSEWHERE[where]}`,
  );
}
