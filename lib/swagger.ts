/**
 * `nestjs-snowflake/swagger`: `@ApiSnowflakeId()` and the schema of an ID for `@nestjs/swagger` documents. A
 * separate entry point, so that `@nestjs/swagger` stays an optional peer: the main entry never imports it.
 */
export { ApiSnowflakeId, type ApiSnowflakeIdOptions } from './swagger/api-snowflake-id.decorator.js';
export {
  SNOWFLAKE_ID_SCHEMA,
  snowflakeIdSchema,
  type DocumentedIdForm,
  type SnowflakeIdSchema,
} from './swagger/snowflake-id.schema.js';
export { ApiSnowflakeIdPlacementError } from './swagger/swagger.errors.js';
