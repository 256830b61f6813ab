import { GeneratedIdTypeError } from './generated-id.errors.js';

/** Column types narrower than any layout's IDs on every database: refused where `@GeneratedId()` is declared. */
const NARROW_EVERYWHERE = new Set(['float4', 'int2', 'int4', 'smallint', 'tinyint', 'mediumint']);

const SQLITE_LIKE = new Set([
  'sqlite',
  'better-sqlite3',
  'capacitor',
  'cordova',
  'expo',
  'nativescript',
  'react-native',
  'sqljs',
]);
const MYSQL_LIKE = new Set(['mysql', 'mariadb', 'aurora-mysql']);
/** Where `int`/`integer` (and TypeORM's mapping of `Number`) is a 32-bit column. */
const INT_IS_32_BITS = new Set(['postgres', 'aurora-postgres', 'mysql', 'mariadb', 'aurora-mysql', 'mssql', 'sap']);

/**
 * The column type's name as `@GeneratedId()` records it: lower case, and `'Number'` for the `Number` constructor
 * (which TypeORM maps to an integer column); '' for a type it cannot name (then nothing is checked).
 * @internal
 */
export function columnTypeName(type: unknown): string {
  if (type === Number) return 'Number';
  return typeof type === 'string' ? type.toLowerCase() : '';
}

/**
 * Refuses, where `@GeneratedId()` is declared, a column type that holds no layout's IDs on any database.
 * @internal
 */
export function checkDeclaredColumnType(typeName: string, entity: string, property: string): void {
  if (NARROW_EVERYWHERE.has(typeName)) {
    throw new GeneratedIdTypeError(entity, property, `${refusal(typeName)} on every database. ${FIX}`);
  }
}

/**
 * The most bits of an integer the column type holds exactly on `driver` (TypeORM's `type` option), or undefined when
 * it holds 64 bits or the type is not one this check knows.
 * @internal
 */
export function exactBitsOf(typeName: string, driver: string): number | undefined {
  switch (typeName) {
    case 'int':
    case 'integer':
    case 'Number':
      return INT_IS_32_BITS.has(driver) ? 32 : undefined;
    case 'double':
    case 'double precision':
    case 'float8':
      return 53;
    case 'float':
      return MYSQL_LIKE.has(driver) ? 24 : 53;
    case 'real':
      return SQLITE_LIKE.has(driver) ? 53 : 24;
    default:
      return undefined;
  }
}

/**
 * Refuses, when the ORM is attached and the database and layout are known, a column type that cannot hold the
 * layout's IDs exactly there: floating point rounds integers above its mantissa (twenty IDs became three values),
 * and `int`/`integer` are 32 bits on PostgreSQL, MySQL and SQL Server.
 * @internal
 */
export function checkColumnHolds(
  field: { entityName: string; propertyName: string; columnType?: string },
  driver: string,
  totalBits: number,
): void {
  const typeName = field.columnType ?? '';
  const bits = exactBitsOf(typeName, driver);
  if (bits !== undefined && bits < totalBits) {
    throw new GeneratedIdTypeError(
      field.entityName,
      field.propertyName,
      `${refusal(typeName)} on ${driver} (integers up to ${bits} bits exactly), and the layout's IDs have ` +
        `${totalBits} bits. ${FIX}`,
    );
  }
}

const refusal = (typeName: string): string => `the column type ${JSON.stringify(typeName)} cannot hold every ID`;
const FIX = "Use 'bigint' (the default), or 'varchar' to store IDs as text.";
