/**
 * The module's parts under their tokens, on the order Nest builds them in: the exported generator can be injected
 * before the worker-ID source has handed in a worker ID.
 */
import 'reflect-metadata';
import { Module, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { WorkerUnavailableError } from '../../lib/core/errors.js';
import type { SnowflakeGenerator } from '../../lib/core/generator.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { SNOWFLAKE_GENERATOR } from '../../lib/module/snowflake.tokens.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

describe('SNOWFLAKE_GENERATOR before the worker ID is known', () => {
  it('refuses an ID asked for while the module is built, never issuing under worker ID 0 (another holder’s)', async () => {
    let early: unknown;
    @Module({
      imports: [
        SnowflakeModule.forRoot({
          workerSource: new StubWorkerSource({ kind: 'slow', workerId: 9, startDelayMs: 20 }),
        }),
      ],
      providers: [
        {
          provide: 'EARLY_ID',
          useFactory: (generator: SnowflakeGenerator) => {
            try {
              early = generator.next();
            } catch (error) {
              early = error;
            }
            return early;
          },
          inject: [SNOWFLAKE_GENERATOR],
        },
      ],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .setLogger(quiet)
      .compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      expect(early).toBeInstanceOf(WorkerUnavailableError);
      expect((early as WorkerUnavailableError).reason).toBe('not-started');
      const ids = app.get(IdService);
      expect(ids.decode(app.get<SnowflakeGenerator>(SNOWFLAKE_GENERATOR).next()).workerId).toBe(9);
      expect(ids.decode(ids.next()).workerId).toBe(9);
    } finally {
      await app.close();
    }
  });
});
