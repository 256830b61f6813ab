import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SnowflakeModuleOptions } from './snowflake.options.js';

/**
 * Options of a registration that are not generator options: they shape the Nest module, so they are given to
 * `forRoot()` / `forRootAsync()` directly and never come from an options factory.
 *
 * @publicApi
 */
export interface SnowflakeRegistrationExtras {
  /** Register the module globally: its `IdService` (named or not) is injectable in every module. @default false */
  isGlobal?: boolean;
  /**
   * A name for a second (third, …) generator beside the default one, with its own layout, namespace and worker-ID
   * source. Inject its service with `@InjectIdService(name)`; fill entity IDs from it with
   * `@GeneratedId({ generator: name })`. Names are unique per app. @default 'default'
   */
  name?: string;
}

/** @internal */
export const {
  ConfigurableModuleClass: SnowflakeConfigurableModule,
  MODULE_OPTIONS_TOKEN: SNOWFLAKE_MODULE_OPTIONS,
  OPTIONS_TYPE: SNOWFLAKE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SNOWFLAKE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SnowflakeModuleOptions>({ moduleName: 'Snowflake' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createSnowflakeOptions')
  // `name` is listed so that the builder keeps it out of the options; the module adds its providers from it.
  .setExtras<SnowflakeRegistrationExtras>({ isGlobal: false, name: undefined }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
