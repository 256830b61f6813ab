/**
 * An app's own worker-ID source through the `workerSource` option, and the module's parts under their tokens.
 */
import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SnowflakeConfigError, WorkerIdInUseError, WorkerUnavailableError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { SNOWFLAKE_GENERATOR, SNOWFLAKE_WORKER_SOURCE } from '../../lib/module/snowflake.tokens.js';
import type { WorkerIdSource } from '../../lib/worker/worker-source.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

async function boot(options: SnowflakeModuleOptions) {
  const moduleRef = await Test.createTestingModule({ imports: [SnowflakeModule.forRoot(options)] })
    .setLogger(quiet)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, ids: app.get(IdService), moduleRef };
}

describe('workerSource: an app-provided worker-ID source', () => {
  it('issues under the worker ID the source hands in, reports its kind, and gives the last timestamp back', async () => {
    const source = new StubWorkerSource({ kind: 'table', workerId: 7 });
    const { app, ids } = await boot({ workerSource: source });
    const id = ids.next();
    expect(ids.decode(id).workerId).toBe(7);
    expect(ids.status()).toMatchObject({ source: 'table', ready: true, workerId: 7 });
    expect(ids.status().lease).toBeUndefined();
    await app.close();
    expect(source.stoppedAt).toBe(ids.status().lastTimestamp);
    expect(source.stoppedAt).toBeGreaterThanOrEqual(0);
  });

  it('moves the generator one way: the source suspends issuing and hands in another worker ID', async () => {
    const source = new StubWorkerSource({ kind: 'table', workerId: 3 });
    const { app, ids } = await boot({ workerSource: source });
    const before = ids.next();
    source.context!.reassign(null);
    expect(() => ids.next()).toThrow(WorkerUnavailableError);
    expect(ids.status().ready).toBe(false);
    source.context!.reassign({ workerId: 4, datacenterId: 0, floor: source.context!.lastTimestamp() });
    const after = ids.next();
    expect(ids.decode(after).workerId).toBe(4);
    expect(after).toBeGreaterThan(before);
    await app.close();
  });

  it('refuses a second registration in the process on the worker ID a source handed in', async () => {
    const first = await boot({ workerSource: new StubWorkerSource({ kind: 'table', workerId: 11 }) });
    await expect(boot({ workerId: 11 })).rejects.toThrow(WorkerIdInUseError);
    await first.app.close();
    const again = await boot({ workerId: 11 });
    await again.app.close();
  });

  it('exposes the generator and the source under their tokens', async () => {
    const source = new StubWorkerSource({ kind: 'table', workerId: 5 });
    const { app, moduleRef } = await boot({ workerSource: source });
    expect(moduleRef.get(SNOWFLAKE_WORKER_SOURCE)).toBe(source);
    expect(moduleRef.get(SNOWFLAKE_GENERATOR)).toBeInstanceOf(SnowflakeGenerator);
    await app.close();
  });

  it('fails at bootstrap, naming the option, when given with workerId or without the methods of a source', () => {
    expect(
      () => new IdService({ workerSource: new StubWorkerSource({ kind: 'table', workerId: 1 }), workerId: 1 }),
    ).toThrow(/Invalid snowflake option `workerSource`: .*leave `workerId` out/);
    expect(() => new IdService({ workerSource: { kind: 'x' } as unknown as WorkerIdSource })).toThrow(
      SnowflakeConfigError,
    );
  });
});
