/**
 * `nestjs-snowflake/metrics`: OpenTelemetry metrics of the generator and the lease. A separate entry point, so that
 * `@opentelemetry/api` stays an optional peer: the main entry never imports it.
 */
export { SnowflakeMetricsModule } from './metrics/snowflake-metrics.module.js';
export { SnowflakeMetricsService } from './metrics/snowflake-metrics.service.js';
export type { SnowflakeMetricsOptions } from './metrics/metrics.options.js';
