import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { metrics } from '@opentelemetry/api';
import { SnowflakeConfigError } from '../core/errors.js';
import { observesRenewals } from '../lease/renewal-observers.js';
import type { IdService } from '../module/id.service.js';
import { findIdService, findRegistry } from '../module/snowflake.registry.js';
import { registerInstruments, type InstrumentedGenerator } from './metrics.instruments.js';
import type { SnowflakeMetricsSettings } from './metrics.options.js';
import { SNOWFLAKE_METRICS_SETTINGS } from './metrics.tokens.js';

/** The instrumentation scope every instrument is created under. */
export const METER_NAME = 'nestjs-snowflake';

/**
 * Publishes the app's `IdService`s as OpenTelemetry instruments while the app runs: every registration of the app on
 * the same instruments, told apart by the `snowflake.generator` attribute (`'default'` for the one without a name).
 * Registered when the module initialises, removed when it is destroyed (first of the shutdown hooks, before the lease
 * is released). Provided by `SnowflakeMetricsModule`.
 *
 * @publicApi
 */
@Injectable()
export class SnowflakeMetricsService implements OnModuleInit, OnModuleDestroy {
  private unregister: (() => void) | undefined;

  constructor(
    @Inject(SNOWFLAKE_METRICS_SETTINGS) private readonly settings: SnowflakeMetricsSettings,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    if (this.unregister !== undefined) return;
    const generators = this.generators();
    if (generators.length === 0) {
      throw new SnowflakeConfigError(
        'SnowflakeMetricsModule',
        'no IdService in the application: import SnowflakeModule.forRoot() (or forRootAsync()) beside ' +
          'SnowflakeMetricsModule.forRoot(); the metrics read its status.',
      );
    }
    const provider = this.settings.meterProvider ?? metrics.getMeterProvider();
    this.unregister = registerInstruments(provider.getMeter(METER_NAME), this.settings.prefix, generators);
  }

  onModuleDestroy(): void {
    this.unregister?.();
    this.unregister = undefined;
  }

  /**
   * Every registration of the app, each once by name (the first one built for a name registered twice), looked up
   * across modules so that SnowflakeModule need not be global.
   */
  private generators(): InstrumentedGenerator[] {
    const registry = findRegistry(this.moduleRef);
    const names = registry?.names() ?? [];
    const services =
      registry === undefined || names.length === 0
        ? [findIdService(this.moduleRef, undefined, 'SnowflakeMetricsModule')]
        : names.map((name) => registry.get(name));
    return services
      .filter((ids): ids is IdService => ids !== undefined)
      .map((ids) => {
        const source = ids.workerSource;
        return { name: ids.name, status: () => ids.status(), lease: observesRenewals(source) ? source : undefined };
      });
  }
}
