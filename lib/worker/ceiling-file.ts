import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { Layout } from '../core/layout.js';
import { msAtTicks } from '../core/time-units.js';
import {
  CeilingFileAccessError,
  CeilingFileCorruptError,
  CeilingFileForeignError,
  type CeilingFileOwner,
} from './ceiling-file.errors.js';

/**
 * The ceiling file: what a fixed worker ID remembers between runs. One JSON object, replaced whole (written to a
 * temporary file, fsynced, renamed over the file, the directory fsynced), so that a crash leaves either the old or
 * the new content, never a mix.
 *
 * @internal
 */
export interface CeilingRecord {
  format: typeof CEILING_FILE_FORMAT;
  version: typeof CEILING_FILE_VERSION;
  workerId: number;
  datacenterId: number;
  /** The layout's defining fields: a ceiling in ticks means something only in the layout it was written for. */
  layout: Record<LayoutField, number>;
  /** The highest tick the worker may have issued: the next run issues strictly above it. */
  ceiling: number;
  /** `ceiling` as a date, for people reading the file. */
  ceilingAt: string;
  /** `stopped`: the ceiling is the exact last timestamp of a graceful stop; `running`: a bound written ahead. */
  state: 'running' | 'stopped';
  writtenAt: string;
  pid: number;
  host: string;
}

export const CEILING_FILE_FORMAT = 'nestjs-snowflake/ceiling-file';
export const CEILING_FILE_VERSION = 1;

/** The fields that define what a tick and a node are; derived fields (shifts, limits) follow from them. */
const LAYOUT_FIELDS = ['epoch', 'timeUnitMs', 'timestampBits', 'datacenterBits', 'workerBits', 'sequenceBits'] as const;
type LayoutField = (typeof LAYOUT_FIELDS)[number];

/** Whom a file of this worker belongs to. */
export function ceilingOwner(layout: Layout, workerId: number, datacenterId: number): CeilingFileOwner {
  return {
    workerId,
    datacenterId,
    layout: Object.fromEntries(LAYOUT_FIELDS.map((field) => [field, layout[field]])),
  };
}

/** The record to write for `owner` with ceiling `ceilingTicks`. */
export function ceilingRecord(
  layout: Layout,
  owner: CeilingFileOwner,
  ceilingTicks: number,
  state: CeilingRecord['state'],
  nowMs: number,
): CeilingRecord {
  return {
    format: CEILING_FILE_FORMAT,
    version: CEILING_FILE_VERSION,
    workerId: owner.workerId,
    datacenterId: owner.datacenterId,
    layout: owner.layout,
    ceiling: ceilingTicks,
    ceilingAt: ceilingTicks < 0 ? '' : new Date(msAtTicks(layout, ceilingTicks)).toISOString(),
    state,
    writtenAt: new Date(nowMs).toISOString(),
    pid: process.pid,
    host: hostname(),
  };
}

/**
 * Reads the ceiling file of `owner`: undefined when there is none yet (a first start).
 *
 * @throws CeilingFileCorruptError when it is not a ceiling file, CeilingFileForeignError when it is another
 *   worker's or layout's, CeilingFileAccessError when it cannot be read
 */
export async function readCeilingFile(file: string, owner: CeilingFileOwner): Promise<CeilingRecord | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined;
    throw accessError(file, 'read', error);
  }
  const record = parseCeilingRecord(file, text);
  if (!sameOwner(record, owner)) {
    throw new CeilingFileForeignError(
      file,
      { workerId: record.workerId, datacenterId: record.datacenterId, layout: record.layout },
      owner,
    );
  }
  return record;
}

/**
 * Parses a ceiling file's text, checking every field: a file that is not exactly what this library writes is an
 * error, never a missing ceiling.
 *
 * @throws CeilingFileCorruptError
 */
export function parseCeilingRecord(file: string, text: string): CeilingRecord {
  const corrupt = (problem: string) => new CeilingFileCorruptError(file, problem);
  if (text.trim() === '') throw corrupt('it is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw corrupt(`not JSON: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw corrupt('not a JSON object');
  const record = value as Record<string, unknown>;
  if (record.format !== CEILING_FILE_FORMAT) {
    throw corrupt(`its "format" is ${JSON.stringify(record.format)}, not ${JSON.stringify(CEILING_FILE_FORMAT)}`);
  }
  if (record.version !== CEILING_FILE_VERSION) {
    throw corrupt(
      `version ${JSON.stringify(record.version)}, but this version of nestjs-snowflake reads version ` +
        `${CEILING_FILE_VERSION} (a newer release wrote it? run that release)`,
    );
  }
  for (const field of ['workerId', 'datacenterId'] as const) {
    if (!isWhole(record[field], 0)) throw corrupt(`"${field}" is ${JSON.stringify(record[field])}`);
  }
  if (!isWhole(record.ceiling, -1)) throw corrupt(`"ceiling" is ${JSON.stringify(record.ceiling)}`);
  if (record.state !== 'running' && record.state !== 'stopped') {
    throw corrupt(`"state" is ${JSON.stringify(record.state)}`);
  }
  const layout = record.layout as Record<string, unknown> | null;
  if (layout === null || typeof layout !== 'object') throw corrupt('"layout" is missing');
  for (const field of LAYOUT_FIELDS) {
    if (!isWhole(layout[field], 0)) throw corrupt(`"layout.${field}" is ${JSON.stringify(layout[field])}`);
  }
  return record as unknown as CeilingRecord;
}

/**
 * The first half of replacing the file: `record` written to `<file>.tmp` and fsynced, off the event loop. The
 * caller then renames it over the file ({@link commitCeilingFile}), synchronously, so that renames happen in the
 * order the process decides them (a slower write must never land over a later one), and syncs the directory.
 *
 * @returns the temporary file
 * @throws CeilingFileAccessError
 */
export async function prepareCeilingFile(file: string, record: CeilingRecord): Promise<string> {
  const temporary = `${file}.tmp`;
  try {
    const handle = await open(temporary, 'w', 0o644);
    try {
      await handle.writeFile(serialise(record), 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw accessError(file, 'write', error);
  }
  return temporary;
}

/** Renames a prepared file over the file: atomic, and in the kernel (safe from a kill) once this returns. */
export function commitCeilingFile(temporary: string, file: string): void {
  try {
    renameSync(temporary, file);
  } catch (error) {
    throw accessError(file, 'write', error);
  }
}

/** Drops a prepared file that a later write superseded. */
export async function discardCeilingFile(temporary: string): Promise<void> {
  await rm(temporary, { force: true }).catch(() => undefined);
}

/**
 * Makes the renames in the file's directory durable: without it, a power cut could bring back the old file.
 *
 * @throws CeilingFileAccessError
 */
export async function syncCeilingDirectory(file: string): Promise<void> {
  try {
    const directory = await open(dirname(file), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  } catch (error) {
    throw accessError(file, 'write', error);
  }
}

/**
 * Replaces the file with `record`, durably, without leaving the calling thread: the fallback for a process whose
 * event loop has not turned since a raise fell due (a long synchronous loop of IDs), which would otherwise run into
 * its ceiling. Uses a temporary file of its own, so that it never meets a write under way off the event loop.
 *
 * @throws CeilingFileAccessError
 */
export function writeCeilingFileSync(file: string, record: CeilingRecord): void {
  const temporary = `${file}.sync.tmp`;
  try {
    const fd = openSync(temporary, 'w', 0o644);
    try {
      writeFileSync(fd, serialise(record), 'utf8');
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
    throw accessError(file, 'write', error);
  }
}

function serialise(record: CeilingRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

function sameOwner(record: CeilingRecord, owner: CeilingFileOwner): boolean {
  return (
    record.workerId === owner.workerId &&
    record.datacenterId === owner.datacenterId &&
    LAYOUT_FIELDS.every((field) => record.layout[field] === owner.layout[field])
  );
}

function isWhole(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function accessError(file: string, operation: 'read' | 'write', error: unknown): CeilingFileAccessError {
  if (error instanceof CeilingFileAccessError) return error;
  return new CeilingFileAccessError(file, operation, codeOf(error), (error as Error).message);
}
