import { Module, type DynamicModule } from '@nestjs/common';
import { resolveMetricsSettings, type SnowflakeMetricsOptions } from './metrics.options.js';
import { SNOWFLAKE_METRICS_OPTIONS, SNOWFLAKE_METRICS_SETTINGS } from './metrics.tokens.js';
import { SnowflakeMetricsService } from './snowflake-metrics.service.js';

/**
 * Publishes OpenTelemetry metrics of the ID generator and its worker-ID lease, read from the app's `IdService`:
 * import it beside `SnowflakeModule`. With several registrations, each is published on the same instruments under its
 * name (the `snowflake.generator` attribute). Instruments are created on the global meter provider of `@opentelemetry/api`
 * unless one is given, and removed when the app shuts down. The names, kinds and units are listed in the README
 * ("Metrics").
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [SnowflakeModule.forRoot({ redis: { url: process.env.REDIS_URL } }), SnowflakeMetricsModule.forRoot()],
 * })
 * export class AppModule {}
 * ```
 *
 * @publicApi
 */
@Module({})
export class SnowflakeMetricsModule {
  /**
   * An unknown option, a `meterProvider` without `getMeter()` or a bad `prefix` fails the bootstrap with a
   * `SnowflakeConfigError` naming it, as SnowflakeModule's options do.
   */
  static forRoot(options: SnowflakeMetricsOptions = {}): DynamicModule {
    return {
      module: SnowflakeMetricsModule,
      providers: [
        { provide: SNOWFLAKE_METRICS_OPTIONS, useValue: options },
        {
          provide: SNOWFLAKE_METRICS_SETTINGS,
          useFactory: (given: SnowflakeMetricsOptions) => resolveMetricsSettings(given),
          inject: [SNOWFLAKE_METRICS_OPTIONS],
        },
        SnowflakeMetricsService,
      ],
      exports: [SnowflakeMetricsService],
    };
  }
}
