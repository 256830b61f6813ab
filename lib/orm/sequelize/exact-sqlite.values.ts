/**
 * The values that cross {@link exactSqliteDialect}'s adapter, both ways: what node-sqlite3 would bind for a JS value,
 * and what a 64-bit integer read through better-sqlite3's safe integers becomes.
 */

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A 64-bit integer as Sequelize and the app expect it: a number when a number holds it exactly (counts, `INTEGER`
 * keys, PRAGMA fields such as `notnull === 0`, as with node-sqlite3), its decimal string when it does not (as pg
 * returns `int8`, which `snowflakeIdAttribute` reads exactly). Never a bigint: Sequelize and JSON do not expect one.
 * @internal
 */
export function readInteger(value: bigint): number | string {
  return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
}

/** Every bigint of a row, read with {@link readInteger}, in place. @internal */
export function readRow<R>(row: R): R {
  const record = row as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (typeof value === 'bigint') record[key] = readInteger(value);
  }
  return row;
}

/**
 * What node-sqlite3 binds for `value`, in the terms better-sqlite3 accepts. better-sqlite3 binds every JS number as
 * a REAL and refuses booleans and undefined; node-sqlite3 binds integers and booleans as INTEGER and undefined as
 * NULL. A safe integer is bound as an INTEGER here (where node-sqlite3 does so up to 2^31 only), so that a `TEXT`
 * column stores `5`, not `5.0`; a bigint is bound exactly.
 * @internal
 */
export function bindValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  switch (typeof value) {
    case 'number':
      return Number.isSafeInteger(value) ? BigInt(value) : value;
    case 'boolean':
      return value ? 1n : 0n;
    case 'bigint':
    case 'string':
      return value;
    default:
      if (Buffer.isBuffer(value)) return value;
      // node-sqlite3 binds a Date as its time value, a REAL.
      if (value instanceof Date) return value.getTime();
      // node-sqlite3 would bind "[object Object]"; better-sqlite3 refuses it, naming the types it binds.
      return value;
  }
}

/**
 * node-sqlite3's parameters as better-sqlite3's arguments: an array binds by position, an object by name, where
 * node-sqlite3 keeps the `$`, `:` or `@` of a name in its key and better-sqlite3 does not. Sequelize binds
 * `{ $1: …, $2: … }`.
 * @internal
 */
export function bindParameters(parameters: unknown[]): unknown[] {
  const [first] = parameters;
  if (parameters.length === 1 && isNamed(first)) {
    const named: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(first)) named[key.replace(/^[$:@]/, '')] = bindValue(value);
    return Object.keys(named).length === 0 ? [] : [named];
  }
  const positional = parameters.length === 1 && Array.isArray(first) ? (first as unknown[]) : parameters;
  return positional.map(bindValue);
}

function isNamed(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !Buffer.isBuffer(value) &&
    !(value instanceof Date)
  );
}
