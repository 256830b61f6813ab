import { Logger, type Provider } from '@nestjs/common';
import { SnowflakeGenerator } from '../core/generator.js';
import { RedisWorkerSource } from '../lease/redis-worker.source.js';
import { CeilingFileWorkerSource } from '../worker/ceiling-file.source.js';
import { StaticWorkerSource } from '../worker/static.source.js';
import { WorkerBinding, blockedPermit } from '../worker/worker-binding.js';
import type { WorkerIdSource } from '../worker/worker-source.js';
import { SnowflakeConfigError } from '../core/errors.js';
import { SNOWFLAKE_MODULE_OPTIONS } from './snowflake.module-definition.js';
import type { SnowflakeModuleOptions } from './snowflake.options.js';
import { SnowflakeRegistry } from './snowflake.registry.js';
import { resolveSettings, type SnowflakeSettings } from './snowflake.settings.js';
import {
  DEFAULT_GENERATOR_NAME,
  SNOWFLAKE_BINDING,
  SNOWFLAKE_GENERATOR,
  SNOWFLAKE_PUBLIC_IDS,
  SNOWFLAKE_SETTINGS,
  SNOWFLAKE_WORKER_SOURCE,
} from './snowflake.tokens.js';

export function createGenerator(settings: SnowflakeSettings): SnowflakeGenerator {
  return new SnowflakeGenerator({
    layout: settings.layout,
    clock: settings.clock,
    clockBackToleranceMs: settings.clockBackToleranceMs,
    maxSyncWaitMs: settings.maxSyncWaitMs,
    sequenceStart: settings.sequenceStart,
    datacenterId: settings.datacenterId,
    // The generator is exported (SNOWFLAKE_GENERATOR) and may be injected before the binding has been built and has
    // applied the source's worker ID: until then it refuses, rather than issue under worker ID 0 (another holder's).
    permit: blockedPermit('not-started'),
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
        ? new StaticWorkerSource(worker.kind, worker.workerId, settings.datacenterId, worker.lock)
        : new CeilingFileWorkerSource(
            worker.kind,
            worker.workerId,
            settings.datacenterId,
            worker.ceilingFile,
            worker.lock,
          );
  }
}

export function createBinding(
  settings: SnowflakeSettings,
  generator: SnowflakeGenerator,
  source: WorkerIdSource,
  logContext = 'Snowflake',
): WorkerBinding {
  return new WorkerBinding(
    generator,
    source,
    settings.layout,
    settings.clock,
    new Logger(logContext),
    true,
    settings.maxAsyncWaitMs,
  );
}

/** The tokens of one registration's parts. @internal */
export interface RegistrationTokens {
  settings: string;
  generator: string;
  workerSource: string;
  binding: string;
}

/**
 * The default registration's parts sit under the public tokens; a named one's under tokens of its own, so that
 * `app.get(SNOWFLAKE_GENERATOR)` never finds another registration's generator.
 *
 * @internal
 */
export function registrationTokens(name: string): RegistrationTokens {
  if (name === DEFAULT_GENERATOR_NAME) {
    return {
      settings: SNOWFLAKE_SETTINGS,
      generator: SNOWFLAKE_GENERATOR,
      workerSource: SNOWFLAKE_WORKER_SOURCE,
      binding: SNOWFLAKE_BINDING,
    };
  }
  const token = (part: string) => `nestjs-snowflake:${name}:${part}`;
  return {
    settings: token('settings'),
    generator: token('generator'),
    workerSource: token('worker-source'),
    binding: token('binding'),
  };
}

/** The parts behind `IdService`, each under its token: settings → generator and source → their binding. */
export function snowflakeProviders(name: string): Provider[] {
  const tokens = registrationTokens(name);
  const logContext = name === DEFAULT_GENERATOR_NAME ? 'Snowflake' : `Snowflake:${name}`;
  return [
    {
      provide: tokens.settings,
      // The name is taken in the app's registry first, so that a name given twice fails before a worker ID is
      // claimed.
      useFactory: (options: SnowflakeModuleOptions, registry: SnowflakeRegistry) => {
        if (options !== null && typeof options === 'object' && 'name' in options) {
          throw new SnowflakeConfigError(
            'name',
            'give the name to forRootAsync({ name, useFactory, … }) itself, not in the options the factory returns: ' +
              'the injection token is made from it before the factory runs.',
          );
        }
        registry.reserve(name);
        return resolveSettings(options);
      },
      inject: [SNOWFLAKE_MODULE_OPTIONS, SnowflakeRegistry],
    },
    { provide: tokens.generator, useFactory: createGenerator, inject: [tokens.settings] },
    // Module-scoped, like SNOWFLAKE_NAME: each registration's IdService gets its own registration's public IDs.
    {
      provide: SNOWFLAKE_PUBLIC_IDS,
      useFactory: (settings: SnowflakeSettings) => settings.publicIds ?? null,
      inject: [tokens.settings],
    },
    { provide: tokens.workerSource, useFactory: createWorkerSource, inject: [tokens.settings] },
    {
      provide: tokens.binding,
      // The worker ID is claimed while the module is built, before any module initialises: a Redis that cannot be
      // reached, a full namespace or a clock out of sync then fail the bootstrap the way an invalid option does,
      // through Nest's exception handler, instead of as a rejection of app.listen().
      useFactory: async (settings: SnowflakeSettings, generator: SnowflakeGenerator, source: WorkerIdSource) => {
        const binding = createBinding(settings, generator, source, logContext);
        await binding.start();
        return binding;
      },
      inject: [tokens.settings, tokens.generator, tokens.workerSource],
    },
  ];
}
