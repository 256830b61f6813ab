import { IdPrecisionLossError } from './generated-id.errors.js';
import type { DataSourceLike } from './typeorm.structural.js';

/** 2^53 + 1: the smallest positive integer a JS number cannot hold, so a rounding driver cannot return it exactly. */
const PROBE = 9007199254740993n;

const SQLITE_TYPES = [
  'better-sqlite3',
  'sqlite',
  'sqljs',
  'capacitor',
  'cordova',
  'react-native',
  'nativescript',
  'expo',
];

/** A query that returns {@link PROBE} as a 64-bit integer, per TypeORM driver type. */
function probeQuery(type: string): string | undefined {
  if (['postgres', 'aurora-postgres', 'cockroachdb', 'mssql'].includes(type))
    return `SELECT CAST(${PROBE} AS BIGINT) AS v`;
  if (['mysql', 'mariadb', 'aurora-mysql'].includes(type)) return `SELECT CAST(${PROBE} AS SIGNED) AS v`;
  if (SQLITE_TYPES.includes(type)) return `SELECT ${PROBE} AS v`;
  if (type === 'oracle') return `SELECT ${PROBE} AS "v" FROM DUAL`;
  return undefined;
}

/** How to make each driver return exact 64-bit integers. */
function fixFor(type: string): string {
  switch (type) {
    case 'better-sqlite3':
      return (
        "Pass `driver: safeIntegerDriver(Database)` (import Database from 'better-sqlite3'; import { safeIntegerDriver } " +
        "from 'nestjs-snowflake/typeorm') in the DataSource options, or `prepareDatabase: (db) => " +
        'db.defaultSafeIntegers(true)` if you do not use `synchronize`.'
      );
    case 'postgres':
    case 'aurora-postgres':
    case 'cockroachdb':
      return (
        'Remove `parseInt8: true` from the DataSource options (and any pg.types.setTypeParser(20, ...) that parses ' +
        'int8 to a number): pg then returns int8 as an exact decimal string.'
      );
    case 'mysql':
    case 'mariadb':
    case 'aurora-mysql':
      return "Set `supportBigNumbers: true, bigNumberStrings: true` in the DataSource options (TypeORM's defaults).";
    case 'sqlite':
      return "The sqlite3 package has no exact mode: use type 'better-sqlite3' with `driver: safeIntegerDriver(Database)`.";
    default:
      return 'Configure the driver to return 64-bit integers as strings or bigints, or use a layout of 53 bits or fewer.';
  }
}

/** What the probe learnt about a DataSource. @internal */
export interface ProbeResult {
  /** False when the driver type has no known probe query. */
  checked: boolean;
  /** For SQLite: PRAGMA results come back as bigints, which TypeORM's schema reader misreads. */
  bigintPragmas: boolean;
}

/**
 * Asks the database for 2^53 + 1 and checks that it comes back exactly, as a bigint or a decimal string.
 *
 * @throws IdPrecisionLossError naming the DataSource and the driver option that fixes it
 * @internal
 */
export async function probePrecision(dataSource: DataSourceLike, name: string): Promise<ProbeResult> {
  const { type } = dataSource.options;
  const sql = probeQuery(type);
  if (sql === undefined) return { checked: false, bigintPragmas: false };
  const value = firstValue(await dataSource.query(sql));
  if (value !== PROBE && value !== PROBE.toString()) {
    throw new IdPrecisionLossError(`The TypeORM DataSource "${name}" (${type})`, value, fixFor(type));
  }
  let bigintPragmas = false;
  if (SQLITE_TYPES.includes(type)) {
    bigintPragmas = typeof firstValue(await dataSource.query('PRAGMA schema_version')) === 'bigint';
  }
  return { checked: true, bigintPragmas };
}

function firstValue(rows: unknown): unknown {
  const row: unknown = Array.isArray(rows) ? rows[0] : undefined;
  return typeof row === 'object' && row !== null ? Object.values(row)[0] : undefined;
}
