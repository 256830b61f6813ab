import { Logger, type Provider } from '@nestjs/common';
import { SnowflakeGenerator } from '../core/generator.js';
import { RedisWorkerSource } from '../lease/redis-worker.source.js';
import { FileCeilingWorkerSource } from '../worker/file-ceiling.source.js';
import { StaticWorkerSource } from '../worker/static.source.js';
import { WorkerBinding } from '../worker/worker-binding.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { SNOWFLAKE_MODULE_OPTIONS } from './snowflake.module-definition.js';
import type { SnowflakeModuleOptions } from './snowflake.options.js';
import { resolveSettings, type SnowflakeSettings } from './snowflake.settings.js';
import {
  SNOWFLAKE_BINDING,
  SNOWFLAKE_GENERATOR,
  SNOWFLAKE_SETTINGS,
  SNOWFLAKE_WORKER_SOURCE,
} from './snowflake.tokens.js';

export function createGenerator(settings: SnowflakeSettings): SnowflakeGenerator {
  return new SnowflakeGenerator({
    layout: settings.layout,
    clock: settings.clock,
    clockBackToleranceMs: settings.clockBackToleranceMs,
    maxSyncWaitMs: settings.maxSyncWaitMs,
    datacenterId: settings.datacenterId,
  });
}

/** The worker-ID source the settings name (the lease loads ioredis only when it starts). */
export function createWorkerSource(settings: SnowflakeSettings): WorkerIdSource {
  const { worker } = settings;
  switch (worker.kind) {
    case 'custom':
      return worker.source;
    case 'redis':
      return new RedisWorkerSource(worker.lease, settings.datacenterId);
    default:
      return worker.ceilingFile === undefined
        ? new StaticWorkerSource(worker.kind, worker.workerId, settings.datacenterId)
        : new FileCeilingWorkerSource(worker.kind, worker.workerId, settings.datacenterId, worker.ceilingFile);
  }
}

export function createBinding(
  settings: SnowflakeSettings,
  generator: SnowflakeGenerator,
  source: WorkerIdSource,
): WorkerBinding {
  return new WorkerBinding(generator, source, settings.layout, settings.clock, new Logger('Snowflake'));
}

/** The parts behind `IdService`, each under its token: settings → generator and source → their binding. */
export const SNOWFLAKE_PROVIDERS: Provider[] = [
  {
    provide: SNOWFLAKE_SETTINGS,
    useFactory: (options: SnowflakeModuleOptions) => resolveSettings(options),
    inject: [SNOWFLAKE_MODULE_OPTIONS],
  },
  { provide: SNOWFLAKE_GENERATOR, useFactory: createGenerator, inject: [SNOWFLAKE_SETTINGS] },
  { provide: SNOWFLAKE_WORKER_SOURCE, useFactory: createWorkerSource, inject: [SNOWFLAKE_SETTINGS] },
  {
    provide: SNOWFLAKE_BINDING,
    // The worker ID is claimed while the module is built, before any module initialises: a Redis that cannot be
    // reached, a full namespace or a clock out of sync then fail the bootstrap the way an invalid option does,
    // through Nest's exception handler, instead of as a rejection of app.listen().
    useFactory: async (settings: SnowflakeSettings, generator: SnowflakeGenerator, source: WorkerIdSource) => {
      const binding = createBinding(settings, generator, source);
      await binding.start();
      return binding;
    },
    inject: [SNOWFLAKE_SETTINGS, SNOWFLAKE_GENERATOR, SNOWFLAKE_WORKER_SOURCE],
  },
];
