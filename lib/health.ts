/**
 * `nestjs-snowflake/health`: the terminus health indicator. A separate entry point, so that `@nestjs/terminus` stays
 * an optional peer: the main entry never imports it.
 */
export { SnowflakeHealthModule } from './health/snowflake-health.module.js';
export {
  SnowflakeHealthIndicator,
  type SnowflakeDownReason,
  type SnowflakeHealthOptions,
} from './health/snowflake.health.js';
