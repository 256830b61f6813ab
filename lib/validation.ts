/**
 * `nestjs-snowflake/validation`: `@IsSnowflakeId()` and `@ToSnowflakeId()` for class-validator and
 * class-transformer DTOs. A separate entry point, so that both stay optional peers: the main entry never imports them.
 */
export { IsSnowflakeId, type IsSnowflakeIdOptions } from './validation/is-snowflake-id.decorator.js';
export { SnowflakeIdConstraint } from './validation/snowflake-id.constraint.js';
export { SnowflakeValidationModule } from './validation/snowflake-validation.module.js';
export { ToSnowflakeId, type ToSnowflakeIdOptions } from './validation/to-snowflake-id.decorator.js';
export { SnowflakeValidationSetupError } from './validation/validation.errors.js';
