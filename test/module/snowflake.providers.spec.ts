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
import type { WorkerAssignment, WorkerIdSource } from '../../lib/worker/worker-source.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** A source (a lease, say) that needs a moment before it hands in worker ID 9. */
class SlowSource implements WorkerIdSource {
  readonly kind = 'slow';
  start(): Promise<WorkerAssignment> {
    return new Promise((resolve) => setTimeout(() => resolve({ workerId: 9, datacenterId: 0, floor: -1 }), 20));
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  requestSwitch(): boolean {
    return false;
  }
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
}

describe('SNOWFLAKE_GENERATOR before the worker ID is known', () => {
  it('refuses an ID asked for while the module is built, never issuing under worker ID 0 (another holder’s)', async () => {
    let early: unknown;
    @Module({
      imports: [SnowflakeModule.forRoot({ workerSource: new SlowSource() })],
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
