import {
  Module,
  type DynamicModule,
  type INestApplicationContext,
  type LoggerService,
  type Type,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { SnowflakeModule } from '../../../../lib/index.js';
import type { SnowflakeModuleOptions } from '../../../../lib/index.js';
import { SnowflakeTypeOrmModule } from '../../../../lib/typeorm.js';

/** A logger that keeps warnings and errors, so tests can assert what the module reported. */
export class RecordingLogger implements LoggerService {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  log(): void {}
  warn(message: unknown): void {
    this.warnings.push(String(message));
  }
  error(message: unknown): void {
    this.errors.push(String(message));
  }
}

/**
 * Boots a real Nest application context (no mocks) with SnowflakeModule, SnowflakeTypeOrmModule and one
 * TypeOrmModule.forRoot per DataSource (the first unnamed, the default), and nothing else: the module must find the
 * DataSources itself.
 */
export async function bootApp(
  dataSources: TypeOrmModuleOptions[],
  snowflake: SnowflakeModuleOptions = { workerId: 1 },
  logger: RecordingLogger = new RecordingLogger(),
): Promise<INestApplicationContext> {
  return bootModules(
    [
      SnowflakeModule.forRoot(snowflake),
      ...dataSources.map((options) => TypeOrmModule.forRoot(options)),
      SnowflakeTypeOrmModule,
    ],
    logger,
  );
}

/** Boots a real Nest application context whose app module imports `imports`, as they are. */
export async function bootModules(
  imports: Array<DynamicModule | Type>,
  logger: RecordingLogger = new RecordingLogger(),
): Promise<INestApplicationContext> {
  @Module({ imports })
  class AppModule {}
  const app = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(logger)
    .compile();
  try {
    await app.init();
  } catch (error) {
    // A failed bootstrap still closes the DataSources it opened, so no pool outlives the test.
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}
