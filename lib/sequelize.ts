/**
 * `nestjs-snowflake/sequelize`: an attribute for exact snowflake IDs and the hooks that fill them on insert. A
 * separate entry point, so that `sequelize` stays an optional peer: nothing else imports it.
 */
export type { SnowflakeColumnMode } from './orm/id-column.values.js';
export type { SnowflakeIdSource } from './orm/id-issuer.js';
export { snowflakeIdAttribute, type SnowflakeIdAttributeOptions } from './orm/sequelize/snowflake-id.attribute.js';
export { snowflakeIdHooks, type SnowflakeIdHooks } from './orm/sequelize/snowflake-id.hooks.js';
export { IdPrecisionLossError } from './orm/typeorm/generated-id.errors.js';
