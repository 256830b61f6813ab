import { Module } from '@nestjs/common';
import { IdService } from './id.service.js';
import { SNOWFLAKE_PROVIDERS } from './snowflake.providers.js';
import { SNOWFLAKE_GENERATOR, SNOWFLAKE_WORKER_SOURCE } from './snowflake.tokens.js';
import { SnowflakeConfigurableModule } from './snowflake.module-definition.js';

/**
 * Registers {@link IdService}.
 *
 * @example
 * SnowflakeModule.forRoot({ workerId: 1 })
 * SnowflakeModule.forRoot({ redis: { url: 'redis://localhost:6379' }, isGlobal: true })
 * SnowflakeModule.forRootAsync({ inject: [ConfigService], useFactory: (c: ConfigService) => ({ redis: { url: c.get('REDIS_URL') } }) })
 *
 * @publicApi
 */
@Module({
  providers: [...SNOWFLAKE_PROVIDERS, IdService],
  exports: [IdService, SNOWFLAKE_GENERATOR, SNOWFLAKE_WORKER_SOURCE],
})
export class SnowflakeModule extends SnowflakeConfigurableModule {}
