import 'reflect-metadata';
import type { DynamicModule, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { resolveSettings } from '../../lib/module/snowflake.settings.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const KEY = 'hostile-options-key-0123456789';

async function boot(module: DynamicModule): Promise<IdService> {
  const moduleRef = await Test.createTestingModule({ imports: [module] })
    .setLogger(quiet)
    .compile();
  await moduleRef.init();
  const ids = moduleRef.get(IdService);
  await moduleRef.close();
  return ids;
}

/** What `call` threw, synchronously or not. */
async function failure(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  return undefined;
}

const fromJson = (json: string) => JSON.parse(json) as SnowflakeModuleOptions;

describe('module options that reach for the prototype', () => {
  it.each([
    ['{"__proto__":{"workerId":7}}', '__proto__'],
    ['{"workerId":1,"__proto__":{"publicIds":{"keys":["' + KEY + '"],"checkBits":0}}}', '__proto__'],
    ['{"workerId":1,"publicIds":{"keys":["' + KEY + '"],"__proto__":{"checkBits":0}}}', 'publicIds.__proto__'],
    ['{"workerId":1,"layout":{"constructor":{"workerBits":3}}}', 'layout.constructor'],
    ['{"workerId":1,"prototype":{}}', 'prototype'],
  ])('forRoot(JSON.parse(%j)) fails naming %s, as forRootAsync() and the settings do', async (json, option) => {
    for (const attempt of [
      () => boot(SnowflakeModule.forRoot(fromJson(json))),
      () => boot(SnowflakeModule.forRootAsync({ useFactory: () => fromJson(json) })),
      () => resolveSettings(fromJson(json)),
    ]) {
      const error = await failure(attempt);
      expect(error).toBeInstanceOf(SnowflakeConfigError);
      expect(error).toMatchObject({ option });
    }
  });
});

describe('module options of the wrong type fail with SnowflakeConfigError', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['a bigint workerId', { workerId: 1n }, 'workerId'],
    ['a bigint datacenterId', { workerId: 1, datacenterId: 1n, layout: 'twitter' }, 'datacenterId'],
    [
      "requireSafeNumbers: 'true'",
      { workerId: 1, layout: 'js-safe', requireSafeNumbers: 'true' },
      'requireSafeNumbers',
    ],
    ['a Date as the layout', { workerId: 1, layout: new Date() }, 'layout'],
    ['a Map as the layout', { workerId: 1, layout: new Map() }, 'layout'],
    ['a clock that returns a string', { workerId: 1, clock: { now: () => '1764000000000' } }, 'clock'],
    ['a clock that returns NaN', { workerId: 1, clock: { now: () => NaN } }, 'clock'],
    ['an epoch with a null prototype', { workerId: 1, layout: { epoch: Object.create(null) } }, 'layout.epoch'],
    ['a huge bigint workerId', { workerId: 10n ** 100_000n }, 'workerId'],
  ])('%s', async (_, options, option) => {
    const error = await failure(() => boot(SnowflakeModule.forRoot(options)));
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect(error).toMatchObject({ option });
    expect((error as Error).message.length).toBeLessThan(600);
  });

  it('refuses a clock whose reading turns bad after bootstrap, when an ID is issued', async () => {
    let reading: unknown = Date.now();
    const ids = new IdService({ workerId: 1, clock: { now: () => reading as number } });
    await ids.onModuleInit();
    try {
      expect(typeof ids.next()).toBe('bigint');
      reading = Number.NaN;
      expect(() => ids.next()).toThrow(SnowflakeConfigError);
    } finally {
      await ids.onApplicationShutdown();
    }
  });
});
