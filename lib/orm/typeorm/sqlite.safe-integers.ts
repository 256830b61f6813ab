/** A better-sqlite3 statement, by shape. */
interface SqliteStatementLike {
  readonly reader: boolean;
  safeIntegers(toggleState?: boolean): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  iterate(...params: unknown[]): IterableIterator<unknown>;
}

/** A better-sqlite3 `Database` class, by shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mixin's base constructor must take any[]
type SqliteDatabaseClass = new (...args: any[]) => { prepare(source: string): SqliteStatementLike };

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A 64-bit integer that a JS number holds exactly becomes that number; a larger one stays a bigint. */
function narrowValue(value: unknown): unknown {
  return typeof value === 'bigint' && value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
}

/** Narrows every value of a row in place: an object row, an array row (`raw()`) or a plucked scalar. */
function narrowRow(row: unknown): unknown {
  if (typeof row !== 'object' || row === null) return narrowValue(row);
  const record = row as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (typeof value === 'bigint') record[key] = narrowValue(value);
  }
  return row;
}

/**
 * A better-sqlite3 `Database` class whose queries return 64-bit integers exactly, for TypeORM's `driver` option:
 * as a JS number when a number holds the value exactly, as a bigint when it does not. By default better-sqlite3
 * returns every integer as a number, rounding each snowflake ID above 2^53; `defaultSafeIntegers(true)` returns
 * every integer as a bigint, which breaks code that expects numbers (counts, `int` columns, TypeORM's own reading
 * of PRAGMA results during `synchronize`).
 *
 * @example
 * ```ts
 * import Database from 'better-sqlite3';
 * import { safeIntegerDriver } from 'nestjs-snowflake/typeorm';
 *
 * TypeOrmModule.forRoot({ type: 'better-sqlite3', database: 'app.db', driver: safeIntegerDriver(Database), autoLoadEntities: true })
 * ```
 *
 * @publicApi
 */
export function safeIntegerDriver<C extends SqliteDatabaseClass>(Database: C): C {
  // A subclass passed through TypeORM's documented `driver` option, rather than changing the connection it opened.
  return class SafeIntegerDatabase extends Database {
    override prepare(source: string): SqliteStatementLike {
      const statement = super.prepare(source);
      if (!statement.reader) return statement;
      statement.safeIntegers(true);
      const get = statement.get.bind(statement);
      const all = statement.all.bind(statement);
      const iterate = statement.iterate.bind(statement);
      statement.get = (...params) => {
        const row = get(...params);
        return row === undefined ? row : narrowRow(row);
      };
      statement.all = (...params) => {
        const rows = all(...params);
        for (let index = 0; index < rows.length; index++) rows[index] = narrowRow(rows[index]);
        return rows;
      };
      statement.iterate = function* (...params) {
        for (const row of iterate(...params)) yield narrowRow(row);
      };
      return statement;
    }
  };
}
