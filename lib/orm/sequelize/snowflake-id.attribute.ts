import { DataTypes, type Model, type ModelAttributeColumnOptions } from 'sequelize';
import { readId, writtenId, type SnowflakeColumnMode } from '../id-column.values.js';

/** Which driver setting gives exact 64-bit integers back: the attribute's getter sees the driver's value. */
const READ_FIX =
  "pg returns int8 as an exact string: remove a global `types.setTypeParser(20, …)`. With MariaDB keep Sequelize's " +
  '`supportBigNumbers` (no `dialectOptions.bigIntAsNumber`); with MySQL keep `supportBigNumbers` and add ' +
  '`bigNumberStrings: true`. With SQLite, pass `dialectModule: exactSqliteDialect()` from ' +
  'nestjs-snowflake/sequelize: the default sqlite3 driver returns every integer as a JS number.';

/** The mark on the column types of {@link snowflakeIdAttribute}, holding the attribute's mode. @internal */
export const SNOWFLAKE_ID_MODE = Symbol('nestjs-snowflake:sequelize-id-mode');

/**
 * The column type of {@link snowflakeIdAttribute}: SQL `BIGINT`, and values written into SQL as integer literals,
 * never as quoted text: MySQL's documented rule compares a string with an integer as doubles, which would match
 * neighbouring IDs; a literal compares exactly whatever the server does. An `ABSTRACT` instance with its own key, so that no dialect swaps it for its own `BIGINT`; not a
 * subclass, because Sequelize's data type classes are proxies whose constructors ignore subclasses.
 */
function snowflakeIdType(mode: SnowflakeColumnMode): object {
  const type = new DataTypes.ABSTRACT() as unknown as Record<string | symbol, unknown>;
  type.key = 'SNOWFLAKE_ID';
  type.toSql = () => 'BIGINT';
  // Sequelize escapes what this returns: a bigint becomes an unquoted integer literal.
  type._stringify = (value: unknown) => writtenId(value);
  type[SNOWFLAKE_ID_MODE] = mode;
  return type;
}

/** The mode of a snowflake ID column type, or undefined for any other type. @internal */
export function snowflakeIdModeOf(type: unknown): SnowflakeColumnMode | undefined {
  return typeof type === 'object' && type !== null
    ? ((type as Record<symbol, unknown>)[SNOWFLAKE_ID_MODE] as SnowflakeColumnMode | undefined)
    : undefined;
}

/** Options of {@link snowflakeIdAttribute}. @publicApi */
export interface SnowflakeIdAttributeOptions<M extends SnowflakeColumnMode = 'bigint'> {
  /** The JS type of the attribute: `bigint`, or the decimal `string`. @default 'bigint' */
  mode?: M;
  /** @default true */
  primaryKey?: boolean;
  /** For an attribute that is not the primary key. @default !primaryKey */
  unique?: boolean;
}

/**
 * A Sequelize attribute for snowflake IDs, filled on insert by {@link snowflakeIdHooks}. It reads back the same JS
 * type every time (`bigint`, or with `mode: 'string'` the decimal string), where plain `BIGINT` gives a number or a
 * string depending on the value and the dialect, and refuses a value the driver has already rounded with
 * `IdPrecisionLossError`. Assigned values are kept as bigints, so that inserts and lookups bind them exactly.
 *
 * @param name the attribute's name, for its getter and setter
 * @example
 * Post.init({ id: snowflakeIdAttribute('id'), title: DataTypes.STRING }, { sequelize });
 * @publicApi
 */
export function snowflakeIdAttribute<M extends SnowflakeColumnMode = 'bigint'>(
  name: string,
  options: SnowflakeIdAttributeOptions<M> = {},
): ModelAttributeColumnOptions {
  const mode: SnowflakeColumnMode = options.mode ?? 'bigint';
  const primaryKey = options.primaryKey ?? true;
  return {
    type: snowflakeIdType(mode) as never,
    primaryKey,
    allowNull: false,
    unique: options.unique ?? !primaryKey,
    get(this: Model) {
      const value: unknown = this.getDataValue(name as never);
      return value === null || value === undefined ? value : readId(value, mode, name, READ_FIX);
    },
    set(this: Model, value: unknown) {
      const stored = value === null || value === undefined ? value : writtenId(value);
      this.setDataValue(name as never, stored);
    },
  };
}
