import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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
  const { timestampBits, datacenterBits, workerBits, sequenceBits, timeUnitMs, epoch } = layout;
  return `${timestampBits}/${datacenterBits}/${workerBits}/${sequenceBits} unit=${timeUnitMs}ms epoch=${epoch}`;
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
 * Synchronous on purpose: one write at a time, finished before the ceiling is handed out, with no asynchronous
 * rename of an older ceiling that could land after a newer one. It runs once per half step (a timer, or, when the
 * event loop is held by a synchronous loop of `next()`, the call that reaches the ceiling).
 *
 * @throws CeilingFileError `unwritable`
 */
export function writeCeiling(file: string, record: CeilingRecord, layout: Layout): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const body = {
    format: FORMAT,
    version: 1,
    ...record,
    ceilingAt: new Date(msAtTicks(layout, record.ceilingTicks)).toISOString(),
    pid: process.pid,
  };
  try {
    const fd = openSync(temporary, 'w', 0o644);
    try {
      writeSync(fd, `${JSON.stringify(body)}\n`);
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
    throw new CeilingFileError(
      file,
      'unwritable',
      `the ceiling could not be written and synced (${(error as Error).message}). Check that its directory exists ` +
        'and is writable by this process, on a local disk that survives restarts.',
    );
  }
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
