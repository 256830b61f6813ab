import { Type, type EntityProperty, type Platform } from '@mikro-orm/core';
import { readId, writtenId, type SnowflakeColumnMode, type SnowflakeColumnValue } from '../id-column.values.js';

/** Which driver setting gives exact 64-bit integers back: MikroORM passes the driver's value to the type. */
const READ_FIX =
  'Leave pg its exact int8 strings (no global `types.setTypeParser(20, …)`); with MariaDB or MySQL keep the ' +
  "connector's BIGINT as bigint or string (no `bigIntAsNumber`, or `supportBigNumbers` and `bigNumberStrings` with " +
  'mysql2); with better-sqlite pass `driverOptions: { connection: { options: { safeIntegers: true } } }`.';

/**
 * A MikroORM property type for snowflake IDs: a `bigint` column, read back exactly as a `bigint` or, with
 * `new SnowflakeIdType('string')`, as the decimal string. A value the driver returned as a rounded JS number is
 * refused with `IdPrecisionLossError`. Values are bound as bigints: MySQL's documented rule compares a string
 * with an integer as doubles, which would match neighbouring IDs.
 *
 * Properties of this type are filled on insert by {@link snowflakeIdSubscriber}.
 *
 * @example
 * ```ts
 * @PrimaryKey({ type: SnowflakeIdType, autoincrement: false })
 * id!: bigint;
 * @Property({ type: new SnowflakeIdType('string'), unique: true })
 * publicId!: string;
 * ```
 *
 * @publicApi
 */
export class SnowflakeIdType<M extends SnowflakeColumnMode = 'bigint'> extends Type<
  SnowflakeColumnValue<M> | null | undefined,
  bigint | string | number | null | undefined
> {
  constructor(readonly mode: M = 'bigint' as M) {
    super();
  }

  override convertToDatabaseValue(value: unknown): bigint | null | undefined {
    if (value === null || value === undefined) return value;
    return writtenId(value);
  }

  override convertToJSValue(value: unknown): SnowflakeColumnValue<M> | null | undefined {
    if (value === null || value === undefined) return value;
    return readId(value, this.mode, 'a SnowflakeIdType property', READ_FIX) as SnowflakeColumnValue<M>;
  }

  override getColumnType(prop: EntityProperty, platform: Platform): string {
    return platform.getBigIntTypeDeclarationSQL(prop);
  }

  override compareAsType(): string {
    return this.mode;
  }

  override compareValues(a: unknown, b: unknown): boolean {
    return String(a) === String(b);
  }

  override toJSON(value: SnowflakeColumnValue<M>): string {
    // JSON has no 64-bit integers: the decimal string, as bigintsToStrings writes.
    return String(value);
  }
}
