/**
 * `nestjs-snowflake/mikro-orm`: a property type for exact snowflake IDs and the subscriber that fills them on insert.
 * A separate entry point, so that `@mikro-orm/core` stays an optional peer: nothing else imports it.
 */
export type { SnowflakeColumnMode, SnowflakeColumnValue } from './orm/id-column.values.js';
export type { SnowflakeIdSource } from './orm/id-issuer.js';
export { SnowflakeIdSubscriber, snowflakeIdSubscriber } from './orm/mikro-orm/snowflake-id.subscriber.js';
export { SnowflakeIdType } from './orm/mikro-orm/snowflake-id.type.js';
export { IdPrecisionLossError } from './orm/typeorm/generated-id.errors.js';
