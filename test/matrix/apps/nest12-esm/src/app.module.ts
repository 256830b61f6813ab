import { type DynamicModule, Module } from '@nestjs/common';
import { SnowflakeModule } from 'nestjs-snowflake';
import { SnowflakeHealthModule } from 'nestjs-snowflake/health';
import { databasePart } from './database.js';
import { PostIds } from './post-ids.service.js';

@Module({})
export class AppModule {
  static async register(): Promise<DynamicModule> {
    const database = await databasePart();
    return {
      module: AppModule,
      imports: [
        SnowflakeModule.forRoot({ redis: { url: process.env.REDIS_URL } }),
        SnowflakeHealthModule,
        ...(database ? [database.DatabaseModule] : []),
      ],
      providers: [PostIds],
    };
  }
}
