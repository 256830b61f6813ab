import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { rejectPrototypeKeys } from '../core/option-checks.js';
import type { PublicIdForm } from '../forms/public-id.form.js';
import { IdService } from './id.service.js';
import { registrationTokens, snowflakeProviders } from './snowflake.providers.js';
import type { WorkerBinding } from '../worker/worker-binding.js';
import { SnowflakeRegistry, SnowflakeRegistryModule } from './snowflake.registry.js';
import { getIdServiceToken, registrationName } from './snowflake.names.js';
import {
  DEFAULT_GENERATOR_NAME,
  SNOWFLAKE_GENERATOR,
  SNOWFLAKE_NAME,
  SNOWFLAKE_PUBLIC_IDS,
  SNOWFLAKE_REGISTRATION,
  SNOWFLAKE_WORKER_SOURCE,
} from './snowflake.tokens.js';
import {
  SnowflakeConfigurableModule,
  type SNOWFLAKE_ASYNC_OPTIONS_TYPE,
  type SNOWFLAKE_OPTIONS_TYPE,
} from './snowflake.module-definition.js';

/**
 * Registers {@link IdService}: the default generator, or with `name` one more beside it.
 *
 * @example
 * SnowflakeModule.forRoot({ workerId: 1 })
 * SnowflakeModule.forRoot({ redis: { url: 'redis://localhost:6379' }, isGlobal: true })
 * SnowflakeModule.forRootAsync({ inject: [ConfigService], useFactory: (c: ConfigService) => ({ redis: { url: c.get('REDIS_URL') } }) })
 * SnowflakeModule.forRoot({ name: 'orders', layout: 'twitter', redis: { url, namespace: 'orders' } }) // @InjectIdService('orders')
 *
 * @publicApi
 */
@Module({})
export class SnowflakeModule extends SnowflakeConfigurableModule {
  /** A registration with options given here. `name` and `isGlobal` shape the module; the rest configure the generator. */
  static forRoot(options: typeof SNOWFLAKE_OPTIONS_TYPE): DynamicModule {
    // Before Nest's builder copies the options by assignment, which would turn an own `__proto__` key into their
    // prototype and let the settings read options through it.
    rejectPrototypeKeys('', options, 'SnowflakeModule.forRoot()');
    const name = registrationName(options?.name);
    return registration(super.forRoot(options), name);
  }

  /** A registration whose options come from a factory, a class or an existing provider; `name` is given here. */
  static forRootAsync(options: typeof SNOWFLAKE_ASYNC_OPTIONS_TYPE): DynamicModule {
    const name = registrationName(options?.name);
    return registration(super.forRootAsync(options), name);
  }
}

/**
 * The providers and exports of one registration. The default one provides `IdService` by class and its parts under
 * the public tokens, as it always has. A named one provides everything under tokens of its own and exports only its
 * `IdService` token, so that neither injection by class nor `app.get(IdService)` ever finds it.
 */
function registration(definition: DynamicModule, name: string): DynamicModule {
  const named = name !== DEFAULT_GENERATOR_NAME;
  const serviceToken = getIdServiceToken(name);
  const tokens = registrationTokens(name);
  const providers: Provider[] = [
    ...(definition.providers ?? []),
    { provide: SNOWFLAKE_NAME, useValue: name },
    ...snowflakeProviders(name),
    named
      ? {
          provide: serviceToken,
          useFactory: (binding: WorkerBinding, publicIds: PublicIdForm | null) =>
            new IdService(binding, name, publicIds),
          inject: [tokens.binding, SNOWFLAKE_PUBLIC_IDS],
        }
      : IdService,
    {
      provide: SNOWFLAKE_REGISTRATION,
      useFactory: (registry: SnowflakeRegistry, ids: IdService) => registry.add(ids),
      inject: [SnowflakeRegistry, serviceToken],
    },
  ];
  return {
    ...definition,
    imports: [...(definition.imports ?? []), SnowflakeRegistryModule],
    providers,
    exports: named ? [serviceToken] : [IdService, SNOWFLAKE_GENERATOR, SNOWFLAKE_WORKER_SOURCE],
  };
}
