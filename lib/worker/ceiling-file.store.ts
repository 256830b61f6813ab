import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Layout } from '../core/layout.js';
import { msAtTicks } from '../core/time-units.js';
import { CeilingFileError } from './ceiling-file.errors.js';

/** What the file says: whose ceiling it is, and the ceiling. */
export interface CeilingRecord {
  layout: string;
  datacenterId: number;
  workerId: number;
  /** The highest timestamp (layout ticks) this worker may have issued. */
  ceilingTicks: number;
}

const FORMAT = 'nestjs-snowflake/worker-ceiling';

/** The layout as the file records it: a ceiling only bounds IDs of the same fields, unit and epoch. */
export function layoutLabel(layout: Layout): string {
  const { timestampBits, datacenterBits, workerBits, sequenceBits, shardBits, timeUnitMs, epoch } = layout;
  // A shard field is named only when there is one, so that files written before layouts had it still match.
  const shard = shardBits > 0 ? `/shard=${shardBits}` : '';
  return `${timestampBits}/${datacenterBits}/${workerBits}/${sequenceBits}${shard} unit=${timeUnitMs}ms epoch=${epoch}`;
}

/**
 * Reads the ceiling of `owner` from `file`: null when there is no file (the worker's first start), the ceiling in
 * ticks otherwise.
 *
 * @throws CeilingFileError `corrupt` when the file is not one this library wrote, `foreign` when it belongs to
 *   another worker, datacenter or layout
 */
export async function readCeiling(file: string, owner: Omit<CeilingRecord, 'ceilingTicks'>): Promise<number | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CeilingFileError(file, 'corrupt', `cannot be read (${(error as Error).message}). Check its permissions.`);
  }
  const record = parse(text);
  if (record === undefined) {
    throw new CeilingFileError(
      file,
      'corrupt',
      'is not a worker ceiling file of nestjs-snowflake, or it was cut short or edited, so the IDs this worker issued ' +
        'before are not known to lie below it. Restore it from a backup; or, if the path was a mistake, point ' +
        '`ceilingFile` at a file of its own. Delete it only once the clock has passed the last time this worker ran ' +
        'by more than `ceilingFile.stepMs`.',
    );
  }
  const mismatch = (['workerId', 'datacenterId', 'layout'] as const).filter((key) => record[key] !== owner[key]);
  if (mismatch.length > 0) {
    throw new CeilingFileError(
      file,
      'foreign',
      `belongs to ${describe(record)}, not to ${describe(owner)}. Every worker needs a file of its own (put the ` +
        'worker ID in its name, such as /var/lib/app/snowflake-worker-3.json); a file is never shared or reused ' +
        'across layouts. If the layout changed on purpose, move the file aside and let this worker start a new one.',
    );
  }
  return record.ceilingTicks;
}

/**
 * Writes the ceiling so that it survives a crash: a temporary file beside it, written and fsynced, renamed over the
 * file, and the directory fsynced so that the rename is on disk too. A crash at any point leaves the old ceiling or
 * the new one, never a torn file.
 *
 * Synchronous: finished before the ceiling is handed out. It serves the start, the stop, and the call that reaches
 * the ceiling when the event loop was held past the background write (a synchronous loop of `next()`); the regular
 * raises go through {@link prepareCeiling} instead, off the event loop.
 *
 * @throws CeilingFileError `unwritable`
 */
export function writeCeiling(file: string, record: CeilingRecord, layout: Layout): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(temporary, 'w', 0o644);
    try {
      writeSync(fd, body(record, layout));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
    const directory = openSync(dirname(file), 'r');
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
  } catch (error) {
    throw unwritable(file, error);
  }
}

/**
 * The first half of a write off the event loop: the record in a temporary file of its own, written and fsynced
 * (the slow part) by the thread pool. The caller renames it over the file with {@link commitCeiling}, on the event
 * loop, so that renames happen in the order the process decides them: an older ceiling never lands over a newer one.
 *
 * @returns the temporary file
 * @throws CeilingFileError `unwritable`
 */
export async function prepareCeiling(file: string, record: CeilingRecord, layout: Layout): Promise<string> {
  const temporary = `${file}.${process.pid}.background.tmp`;
  try {
    const handle = await open(temporary, 'w', 0o644);
    try {
      await handle.writeFile(body(record, layout));
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw unwritable(file, error);
  }
  return temporary;
}

/**
 * Renames a prepared file over the file (atomic, and safe from a kill once this returns), then fsyncs the
 * directory off the event loop so that the rename survives a power cut too.
 *
 * @throws CeilingFileError `unwritable`
 */
export async function commitCeiling(temporary: string, file: string): Promise<void> {
  try {
    renameSync(temporary, file);
    const directory = await open(dirname(file), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  } catch (error) {
    throw unwritable(file, error);
  }
}

/** Drops a prepared file that a later write made stale. */
export async function discardCeiling(temporary: string): Promise<void> {
  await rm(temporary, { force: true }).catch(() => undefined);
}

function body(record: CeilingRecord, layout: Layout): string {
  const content = {
    format: FORMAT,
    version: 1,
    ...record,
    ceilingAt: new Date(msAtTicks(layout, record.ceilingTicks)).toISOString(),
    pid: process.pid,
  };
  return `${JSON.stringify(content)}\n`;
}

function unwritable(file: string, error: unknown): CeilingFileError {
  return new CeilingFileError(
    file,
    'unwritable',
    `the ceiling could not be written and synced (${(error as Error).message}). Check that its directory exists ` +
      'and is writable by this process, on a local disk that survives restarts.',
  );
}

function parse(text: string): CeilingRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  const integer = (key: string) => Number.isSafeInteger(record[key]) && (record[key] as number) >= 0;
  if (record.format !== FORMAT || record.version !== 1 || typeof record.layout !== 'string') return undefined;
  if (!integer('workerId') || !integer('datacenterId') || !integer('ceilingTicks')) return undefined;
  return {
    layout: record.layout,
    workerId: record.workerId as number,
    datacenterId: record.datacenterId as number,
    ceilingTicks: record.ceilingTicks as number,
  };
}

function describe(record: Omit<CeilingRecord, 'ceilingTicks'>): string {
  return `worker ${record.workerId} of datacenter ${record.datacenterId} with layout ${record.layout}`;
}
