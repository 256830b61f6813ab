import { chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnowflakeConfigError, WorkerIdInUseError } from '../core/errors.js';
import { takeHostLock } from './host-lock.js';
import { holderElsewhere } from './lock-holder.js';

/** The option `workerLock` after validation: the lock directory, or `null` for no host lock. @internal */
export type WorkerLockSettings = { dir: string } | null;

/** Where worker-ID locks live unless `workerLock.dir` says otherwise: every process of the host sees it. */
export function defaultWorkerLockDir(): string {
  return join(tmpdir(), 'nestjs-snowflake-locks');
}

/**
 * Takes the host-wide lock on a fixed worker ID, so that no other process or worker thread of this host (that
 * shares the lock directory) runs a generator on it at the same time.
 *
 * @returns the release function, for shutdown
 * @throws WorkerIdInUseError naming the holder when another process or thread holds it
 */
export async function lockWorkerId(
  settings: WorkerLockSettings,
  datacenterId: number,
  workerId: number,
): Promise<() => void> {
  if (settings === null) return () => undefined;
  const { dir } = settings;
  const path = join(dir, `worker-${datacenterId}-${workerId}.lock`);
  let outcome;
  try {
    ensureDirectory(dir);
    outcome = await takeHostLock(path, { datacenterId, workerId });
  } catch (error) {
    throw new SnowflakeConfigError(
      'workerLock.dir',
      `the lock on worker ID ${workerId} (datacenter ${datacenterId}) could not be taken in ${dir} ` +
        `(${(error as Error).message}). Point \`workerLock.dir\` at a local directory every process of this app on ` +
        'this host can write.',
    );
  }
  switch (outcome.kind) {
    case 'taken':
      return outcome.release;
    case 'held':
      throw outcome.here
        ? new WorkerIdInUseError(workerId, datacenterId)
        : new WorkerIdInUseError(workerId, datacenterId, {
            ...outcome.holder,
            lockFile: path,
            elsewhere: holderElsewhere(outcome.holder),
          });
    case 'unreadable':
      throw new SnowflakeConfigError(
        'workerLock.dir',
        `the lock file ${path} of worker ID ${workerId} is not one nestjs-snowflake wrote (${outcome.reason}). ` +
          'Remove it if nothing else uses it, or point `workerLock.dir` at a directory of its own.',
      );
  }
}

/**
 * Creates the lock directory. The default one, under the temp directory, is open to every user with the sticky bit,
 * like `/tmp` itself, so that apps run under different users on one host meet there; an app's own stays as the
 * umask makes it.
 */
function ensureDirectory(dir: string): void {
  const shared = dir === defaultWorkerLockDir();
  const created = mkdirSync(dir, { recursive: true, mode: shared ? 0o1777 : 0o777 });
  // The umask narrowed the mode of the directory created just now.
  if (created !== undefined && shared) chmodSync(dir, 0o1777);
}
