import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SnowflakeModuleOptions } from './snowflake.options.js';

/** @internal */
export const {
  ConfigurableModuleClass: SnowflakeConfigurableModule,
  MODULE_OPTIONS_TOKEN: SNOWFLAKE_MODULE_OPTIONS,
  OPTIONS_TYPE: SNOWFLAKE_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: SNOWFLAKE_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<SnowflakeModuleOptions>({ moduleName: 'Snowflake' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createSnowflakeOptions')
  .setExtras({ isGlobal: false }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
