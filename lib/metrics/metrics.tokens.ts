/** The options given to `SnowflakeMetricsModule.forRoot()`. @internal */
export const SNOWFLAKE_METRICS_OPTIONS = 'nestjs-snowflake:metrics-options';

/** The checked options of `SnowflakeMetricsModule` (`SnowflakeMetricsSettings`). @internal */
export const SNOWFLAKE_METRICS_SETTINGS = 'nestjs-snowflake:metrics-settings';
