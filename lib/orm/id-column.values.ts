/** The JS types of ID columns and properties (Drizzle, MikroORM), and the conversions they share. */
import { ANY_LAYOUT, parseId } from '../core/codec.js';
import { IdPrecisionLossError } from './typeorm/generated-id.errors.js';

/** The JS type a snowflake column gives its rows: `bigint` (the default) or the decimal `string`. @publicApi */
export type SnowflakeColumnMode = 'bigint' | 'string';

/** The value type of a column in `mode`. @publicApi */
export type SnowflakeColumnValue<M extends SnowflakeColumnMode> = M extends 'string' ? string : bigint;

/** Options of the Drizzle snowflake columns. @publicApi */
export interface SnowflakeColumnOptions<M extends SnowflakeColumnMode = 'bigint'> {
  /** @default 'bigint' */
  mode?: M;
}

/**
 * What the driver returned, as the column's JS type. A number that is not a safe integer has been rounded by the
 * driver already: refused, naming the setting that fixes it.
 * @internal
 */
export function readId(value: unknown, mode: SnowflakeColumnMode, column: string, fix: string): bigint | string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new IdPrecisionLossError(`Reading column "${column}"`, value, fix);
  }
  if (typeof value !== 'bigint' && typeof value !== 'string' && typeof value !== 'number') {
    throw new TypeError(`Column "${column}" returned ${typeof value}, not a 64-bit integer.`);
  }
  return mode === 'string' ? String(value) : BigInt(value);
}

/**
 * An ID the app hands to a column, as the exact integer written or compared: a bigint, a decimal string of digits
 * only, or a safe-integer number (`parseId`'s rules). Anything else is refused with `InvalidSnowflakeError` rather
 * than written as another ID: a number beyond 2^53 (rounded already, as `JSON.parse` rounds a request body's ID),
 * `''`, `' 42 '`, `'0x2a'`, `'1e3'`, `true`, and a value beyond 2^63 - 1, which no layout issues and a signed BIGINT
 * column cannot hold (SQLite would store it rounded, as a REAL).
 * @internal
 */
export function writtenId(value: unknown): bigint {
  return parseId(value, ANY_LAYOUT);
}

/** A fresh ID in the column's JS type. @internal */
export function issueId(ids: { next(): bigint }, mode: SnowflakeColumnMode): bigint | string {
  const id = ids.next();
  return mode === 'string' ? id.toString() : id;
}
