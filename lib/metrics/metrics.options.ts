import { inspect } from 'node:util';
import type { MeterProvider } from '@opentelemetry/api';
import { SnowflakeConfigError } from '../core/errors.js';
import { rejectUnknownKeys } from '../core/option-checks.js';

/**
 * Options of `SnowflakeMetricsModule.forRoot()`.
 *
 * @publicApi
 */
export interface SnowflakeMetricsOptions {
  /**
   * Where the instruments are created. @default the global one, `metrics.getMeterProvider()` of
   * `@opentelemetry/api` (set it with `metrics.setGlobalMeterProvider()` before the app starts)
   */
  meterProvider?: MeterProvider;
  /**
   * The first part of every instrument's name: `snowflake.ids.issued` becomes `<prefix>.ids.issued`. Letters,
   * digits, `_`, `.`, `-` and `/`, starting with a letter, as OpenTelemetry instrument names allow.
   * @default 'snowflake'
   */
  prefix?: string;
}

/** The options, checked and with their defaults. @internal */
export interface SnowflakeMetricsSettings {
  meterProvider: MeterProvider | undefined;
  prefix: string;
}

const METRICS_OPTION_KEYS = ['meterProvider', 'prefix'] as const;

/** OpenTelemetry's instrument name syntax, less the room the longest suffix (`.lease.renewal.consecutive_failures`) needs. */
const PREFIX = /^[A-Za-z][A-Za-z0-9_.\-/]{0,199}$/;

/** Checks the options once, at bootstrap; a wrong one fails naming itself and the fix. @internal */
export function resolveMetricsSettings(options: SnowflakeMetricsOptions | undefined): SnowflakeMetricsSettings {
  const given: unknown = options ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new SnowflakeConfigError('options', 'SnowflakeMetricsModule.forRoot() takes an object, such as { prefix }.');
  }
  rejectUnknownKeys('', given, METRICS_OPTION_KEYS, 'SnowflakeMetricsModule');
  const { meterProvider, prefix = 'snowflake' } = given as SnowflakeMetricsOptions;
  if (meterProvider !== undefined && typeof (meterProvider as Partial<MeterProvider>)?.getMeter !== 'function') {
    throw new SnowflakeConfigError(
      'meterProvider',
      `expected an OpenTelemetry MeterProvider (an object with getMeter()), got ${inspect(meterProvider)}: pass ` +
        "`new MeterProvider({ readers })` from '@opentelemetry/sdk-metrics', or leave it out for the global one.",
    );
  }
  if (typeof prefix !== 'string' || !PREFIX.test(prefix) || prefix.endsWith('.')) {
    throw new SnowflakeConfigError(
      'prefix',
      `expected an instrument name prefix such as 'snowflake' or 'orders.snowflake' (a letter, then letters, ` +
        `digits, _ . - /, at most 200 characters, not ending in a dot), got ${inspect(prefix)}.`,
    );
  }
  return { meterProvider, prefix };
}
