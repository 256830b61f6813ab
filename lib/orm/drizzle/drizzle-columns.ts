import { customType as mysqlCustomType } from 'drizzle-orm/mysql-core';
import { customType as pgCustomType } from 'drizzle-orm/pg-core';
import { customType as sqliteCustomType } from 'drizzle-orm/sqlite-core';
import type { SnowflakeIdSource } from '../id-issuer.js';
import {
  issueId,
  readId,
  writtenId,
  type SnowflakeColumnMode,
  type SnowflakeColumnOptions,
  type SnowflakeColumnValue,
} from '../id-column.values.js';

type Driven = string | number | bigint;

/** Which driver setting gives exact 64-bit integers back, per dialect. */
const READ_FIX = {
  pg: 'pg returns int8 as an exact string by default: remove `parseInt8` or a `types.setTypeParser(20, …)` that turns it into a number.',
  mysql: 'Create the mysql2 connection or pool with `supportBigNumbers: true, bigNumberStrings: true`.',
  sqlite:
    "Open better-sqlite3 with exact integers: `new (safeIntegerDriver(Database))(file)` (safeIntegerDriver from 'nestjs-snowflake/drizzle'), or `database.defaultSafeIntegers(true)`.",
} as const;

/**
 * A PostgreSQL `bigint` column whose rows get a snowflake ID on insert (`$defaultFn`) when they give none, read back
 * exactly as a `bigint` or, with `mode: 'string'`, as the decimal string. Chain `.primaryKey()` or `.notNull()`.
 *
 * Drizzle calls `$defaultFn` synchronously, so the ID comes from `next()`: during a lease re-claim the insert fails
 * at once with `WorkerUnavailableError` (503 over HTTP) rather than waiting.
 *
 * @param ids a {@link snowflakeIdSlot} (bound by SnowflakeDrizzleModule), or any source with `next(): bigint`
 * @example
 * export const posts = pgTable('posts', {
 *   id: pgSnowflakeId('id', ids).primaryKey(),
 *   publicId: pgSnowflakeId('public_id', ids, { mode: 'string' }).notNull().unique(),
 *   title: text('title').notNull(),
 * });
 * @publicApi
 */
export function pgSnowflakeId<M extends SnowflakeColumnMode = 'bigint'>(
  name: string,
  ids: SnowflakeIdSource,
  options: SnowflakeColumnOptions<M> = {},
) {
  const mode: SnowflakeColumnMode = options.mode ?? 'bigint';
  // pg binds a bigint or a string through its text form: exact either way, once it is an ID.
  return pgCustomType<{ data: SnowflakeColumnValue<M>; driverData: Driven }>({
    dataType: () => 'bigint',
    toDriver: (value) => (writtenId(value), value),
    fromDriver: (value) => readId(value, mode, name, READ_FIX.pg) as SnowflakeColumnValue<M>,
  })(name).$defaultFn(() => issueId(ids, mode) as SnowflakeColumnValue<M>);
}

/**
 * A MySQL or MariaDB `bigint` column filled like {@link pgSnowflakeId}. Values are bound as bigint literals: MySQL's
 * documented rule compares a string with an integer as doubles, which would match neighbouring IDs.
 * @publicApi
 */
export function mysqlSnowflakeId<M extends SnowflakeColumnMode = 'bigint'>(
  name: string,
  ids: SnowflakeIdSource,
  options: SnowflakeColumnOptions<M> = {},
) {
  const mode: SnowflakeColumnMode = options.mode ?? 'bigint';
  return mysqlCustomType<{ data: SnowflakeColumnValue<M>; driverData: Driven }>({
    dataType: () => 'bigint',
    toDriver: (value) => writtenId(value),
    fromDriver: (value) => readId(value, mode, name, READ_FIX.mysql) as SnowflakeColumnValue<M>,
  })(name).$defaultFn(() => issueId(ids, mode) as SnowflakeColumnValue<M>);
}

/**
 * A SQLite `integer` column filled like {@link pgSnowflakeId}. better-sqlite3 returns integers as rounded numbers
 * unless opened with exact integers (see `safeIntegerDriver`); a rounded read fails with `IdPrecisionLossError`.
 * @publicApi
 */
export function sqliteSnowflakeId<M extends SnowflakeColumnMode = 'bigint'>(
  name: string,
  ids: SnowflakeIdSource,
  options: SnowflakeColumnOptions<M> = {},
) {
  const mode: SnowflakeColumnMode = options.mode ?? 'bigint';
  return sqliteCustomType<{ data: SnowflakeColumnValue<M>; driverData: Driven }>({
    dataType: () => 'integer',
    // A bigint binds as a 64-bit INTEGER; a string would rely on the column's type affinity.
    toDriver: (value) => writtenId(value),
    fromDriver: (value) => readId(value, mode, name, READ_FIX.sqlite) as SnowflakeColumnValue<M>,
  })(name).$defaultFn(() => issueId(ids, mode) as SnowflakeColumnValue<M>);
}
