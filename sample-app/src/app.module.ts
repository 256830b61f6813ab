import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import { SnowflakeModule } from 'nestjs-snowflake';
import { BigIntSerializerInterceptor, SnowflakeExceptionFilter } from 'nestjs-snowflake/http';
import { safeIntegerDriver, SnowflakeTypeOrmModule } from 'nestjs-snowflake/typeorm';
import { DATABASE_CONFIG, SampleConfigModule } from './config/sample-config.module.js';
import { redisLeaseOptions, type DatabaseConfig } from './config/sample.config.js';
import { HealthModule } from './health/health.module.js';
import { IdsModule } from './ids/ids.module.js';
import { NotesModule } from './notes/notes.module.js';
import { UsersModule } from './users/users.module.js';

@Module({
  imports: [
    SampleConfigModule,
    // Every instance leases its own worker ID from Redis: no per-instance configuration. ConfigService reads the
    // environment that SampleConfigModule's ConfigModule.forRoot() loaded (including a .env file).
    SnowflakeModule.forRootAsync({
      isGlobal: true,
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({ redis: redisLeaseOptions(config) }),
    }),
    TypeOrmModule.forRootAsync({ inject: [DATABASE_CONFIG], useFactory: typeOrmOptions }),
    // Fills the @GeneratedId() columns of every TypeORM DataSource with IDs from the SnowflakeModule above.
    SnowflakeTypeOrmModule,
    IdsModule,
    UsersModule,
    NotesModule,
    HealthModule,
  ],
  providers: [
    // Bigints in response bodies (IDs) become decimal strings; JSON.stringify would throw on them.
    { provide: APP_INTERCEPTOR, useClass: BigIntSerializerInterceptor },
    // The library's typed errors: a malformed ID answers 400, an ID that cannot be issued right now 503.
    { provide: APP_FILTER, useClass: SnowflakeExceptionFilter },
  ],
})
export class AppModule {}

function typeOrmOptions(database: DatabaseConfig): TypeOrmModuleOptions {
  // synchronize creates the tables on start: fine for a sample; use migrations in production.
  // autoLoadEntities: the entities UsersModule registers with forFeature().
  const common = { autoLoadEntities: true, synchronize: true };
  return database.kind === 'sqlite'
    ? // better-sqlite3 would return 64-bit integers as rounded numbers; this driver returns exact bigints.
      { type: 'better-sqlite3', database: database.file, driver: safeIntegerDriver(Database), ...common }
    : { type: 'postgres', url: database.url, ...common };
}
