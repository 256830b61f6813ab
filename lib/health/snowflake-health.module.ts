import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SnowflakeHealthIndicator } from './snowflake.health.js';

/**
 * Provides {@link SnowflakeHealthIndicator}. It imports `TerminusModule` for the indicator's `HealthIndicatorService`;
 * the module with your health controller imports `TerminusModule` too, for `HealthCheckService`. SnowflakeModule need
 * not be global: the indicator finds the app's `IdService` wherever it is registered.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [TerminusModule, SnowflakeHealthModule],
 *   controllers: [HealthController],
 * })
 * export class HealthModule {}
 * ```
 *
 * @publicApi
 */
@Module({
  imports: [TerminusModule],
  providers: [SnowflakeHealthIndicator],
  exports: [SnowflakeHealthIndicator],
})
export class SnowflakeHealthModule {}
