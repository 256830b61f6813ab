/**
 * `nestjs-snowflake/sequelize`: an attribute for exact snowflake IDs, the hooks that fill them on insert, and a
 * driver for the sqlite dialect that reads them exactly. A separate entry point, so that `sequelize` stays an
 * optional peer: nothing else imports it; better-sqlite3 is loaded only when `exactSqliteDialect()` is called.
 */
export type { SnowflakeColumnMode } from './orm/id-column.values.js';
export type { SnowflakeIdSource } from './orm/id-issuer.js';
export { snowflakeIdAttribute, type SnowflakeIdAttributeOptions } from './orm/sequelize/snowflake-id.attribute.js';
export { snowflakeIdHooks, type SnowflakeIdHooks } from './orm/sequelize/snowflake-id.hooks.js';
export { exactSqliteDialect } from './orm/sequelize/exact-sqlite.dialect.js';
export type { ExactSqliteDialect } from './orm/sequelize/exact-sqlite.database.js';
export { IdPrecisionLossError } from './orm/typeorm/generated-id.errors.js';
