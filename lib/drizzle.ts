/**
 * `nestjs-snowflake/drizzle`: snowflake ID columns for Drizzle tables (PostgreSQL, MySQL/MariaDB, SQLite) and the
 * module that binds the app's `IdService` to them. A separate entry point, so that `drizzle-orm` stays an optional
 * peer: nothing else imports it.
 */
export { mysqlSnowflakeId, pgSnowflakeId, sqliteSnowflakeId } from './orm/drizzle/drizzle-columns.js';
export { DrizzleIdsNotBoundError, SnowflakeIdSlot, snowflakeIdSlot } from './orm/drizzle/drizzle-id.slot.js';
export type { SnowflakeColumnMode, SnowflakeColumnOptions, SnowflakeColumnValue } from './orm/id-column.values.js';
export { SnowflakeDrizzleModule, type SnowflakeDrizzleOptions } from './orm/drizzle/snowflake-drizzle.module.js';
export type { SnowflakeIdSource } from './orm/id-issuer.js';
export { IdPrecisionLossError, IdServiceNotFoundError } from './orm/typeorm/generated-id.errors.js';
export { safeIntegerDriver } from './orm/typeorm/sqlite.safe-integers.js';
