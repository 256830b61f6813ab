import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { metrics } from '@opentelemetry/api';
import { SnowflakeConfigError } from '../core/errors.js';
import { observesRenewals } from '../lease/renewal-observers.js';
import { IdService } from '../module/id.service.js';
import { SNOWFLAKE_WORKER_SOURCE } from '../module/snowflake.tokens.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { registerInstruments } from './metrics.instruments.js';
import type { SnowflakeMetricsSettings } from './metrics.options.js';
import { SNOWFLAKE_METRICS_SETTINGS } from './metrics.tokens.js';

/** The instrumentation scope every instrument is created under. */
export const METER_NAME = 'nestjs-snowflake';

/**
 * Publishes the app's `IdService` as OpenTelemetry instruments while the app runs: registered when the module
 * initialises, removed when it is destroyed (first of the shutdown hooks, before the lease is released). Provided by
 * `SnowflakeMetricsModule`.
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
    const ids = this.find(() => this.moduleRef.get(IdService, { strict: false }));
    if (ids === undefined) {
      throw new SnowflakeConfigError(
        'SnowflakeMetricsModule',
        'no IdService in the application: import SnowflakeModule.forRoot() (or forRootAsync()) beside ' +
          'SnowflakeMetricsModule.forRoot(); the metrics read its status.',
      );
    }
    const source = this.find(() => this.moduleRef.get<WorkerIdSource>(SNOWFLAKE_WORKER_SOURCE, { strict: false }));
    const provider = this.settings.meterProvider ?? metrics.getMeterProvider();
    this.unregister = registerInstruments(
      provider.getMeter(METER_NAME),
      this.settings.prefix,
      () => ids.status(),
      source !== undefined && observesRenewals(source) ? source : undefined,
    );
  }

  onModuleDestroy(): void {
    this.unregister?.();
    this.unregister = undefined;
  }

  /** Looked up across modules (`strict: false`), so that SnowflakeModule need not be global. */
  private find<T>(lookUp: () => T): T | undefined {
    try {
      return lookUp();
    } catch {
      return undefined;
    }
  }
}
