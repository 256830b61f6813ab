import 'reflect-metadata';
import type { DynamicModule, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SnowflakeConfigError, UnsafeNumberError } from '../../lib/core/errors.js';
import type { LayoutPresetName } from '../../lib/core/layout.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** Boots a module the way an app does (compile, then init) and closes it again. */
async function bootstrap(module: DynamicModule): Promise<IdService> {
  const moduleRef = await Test.createTestingModule({ imports: [module] })
    .setLogger(quiet)
    .compile();
  await moduleRef.init();
  const service = moduleRef.get(IdService);
  await moduleRef.close();
  return service;
}

/** The config error bootstrapping `options` fails with, through forRoot and through forRootAsync. */
async function bootstrapError(options: unknown): Promise<SnowflakeConfigError> {
  const errors: unknown[] = [];
  for (const module of [
    SnowflakeModule.forRoot(options as SnowflakeModuleOptions),
    SnowflakeModule.forRootAsync({ useFactory: async () => options as SnowflakeModuleOptions }),
  ]) {
    try {
      await bootstrap(module);
      errors.push(undefined);
    } catch (error) {
      errors.push(error);
    }
  }
  expect(errors[0]).toBeInstanceOf(SnowflakeConfigError);
  expect(errors[1]).toBeInstanceOf(SnowflakeConfigError);
  expect((errors[1] as Error).message).toBe((errors[0] as Error).message);
  return errors[0] as SnowflakeConfigError;
}

describe('module options are validated at bootstrap', () => {
  it('fails without a worker-ID source, saying which options provide one', async () => {
    const error = await bootstrapError({});
    expect(error.option).toBe('workerId');
    expect(error.message).toMatch(/no worker-ID source/);
    expect(error.message).toMatch(/'hostname'/);
    expect(error.message).toMatch(/`redis`/);
  });

  it('fails with both workerId and redis', async () => {
    const error = await bootstrapError({ workerId: 1, redis: { url: 'redis://127.0.0.1:6379' } });
    expect(error.option).toBe('workerId');
    expect(error.message).toMatch(/either `workerId` or `redis`, not both/);
  });

  it.each<[number, LayoutPresetName, string]>([
    [1024, 'default', '0 to 1023'],
    [32, 'twitter', '0 to 31'],
    [64, 'js-safe', '0 to 63'],
    [-1, 'default', '0 to 1023'],
    [1.5, 'default', '0 to 1023'],
  ])('fails with workerId %p, too large or malformed for the %s layout', async (workerId, layout, range) => {
    const error = await bootstrapError({ workerId, layout });
    expect(error.option).toBe('workerId');
    expect(error.message).toContain(range);
  });

  it('fails with a workerId that is neither a number nor hostname', async () => {
    const error = await bootstrapError({ workerId: '3' });
    expect(error.option).toBe('workerId');
    expect(error.message).toMatch(/"3"/);
  });

  it('fails with a datacenterId that does not fit', async () => {
    expect((await bootstrapError({ workerId: 1, datacenterId: 32, layout: 'twitter' })).option).toBe('datacenterId');
    // The default layout has no datacenter bits.
    expect((await bootstrapError({ workerId: 1, datacenterId: 1 })).option).toBe('datacenterId');
  });

  it("fails with workerId: 'hostname' on a host name without an ordinal", async () => {
    const error = await bootstrapError({ workerId: 'hostname', hostname: 'api' });
    expect(error.option).toBe('workerId');
    expect(error.message).toMatch(/StatefulSet/);
  });

  it.each([['worker42'], ['a1b2c3d4e5f6'], ['api-7d9f8b6c5-x2k45']])(
    "fails with workerId: 'hostname' on %p, which is not a StatefulSet pod name",
    async (hostname) => {
      const error = await bootstrapError({ workerId: 'hostname', hostname });
      expect(error.option).toBe('workerId');
      expect(error.message).toContain(JSON.stringify(hostname));
      expect(error.message).toMatch(/StatefulSet pod name/);
      expect(error.message).toMatch(/set `workerId` to a number/);
    },
  );

  it("boots with workerId: 'hostname' on a StatefulSet pod name, taking its ordinal", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ workerId: 'hostname', hostname: 'api-7' })],
    })
      .setLogger(quiet)
      .compile();
    await moduleRef.init();
    try {
      const service = moduleRef.get(IdService);
      expect(service.decode(service.next()).workerId).toBe(7);
    } finally {
      await moduleRef.close();
    }
  });

  it("fails with workerId: 'hostname' when the ordinal does not fit the layout", async () => {
    const error = await bootstrapError({ workerId: 'hostname', hostname: 'api-32', layout: 'twitter' });
    expect(error.option).toBe('workerId');
    expect(error.message).toMatch(/32 does not fit/);
  });

  it('fails with an invalid layout, naming the layout field', async () => {
    expect((await bootstrapError({ workerId: 1, layout: 'snowflake' })).option).toBe('layout.preset');
    expect((await bootstrapError({ workerId: 1, layout: { sequenceBits: 40 } })).option).toBe('layout.sequenceBits');
    expect((await bootstrapError({ workerId: 1, layout: { epoch: Date.now() + 3_600_000 } })).option).toBe(
      'layout.epoch',
    );
  });

  it('fails with an unknown layout key or a layout that is neither a preset name nor an object', async () => {
    const typo = await bootstrapError({ workerId: 1, layout: { preset: 'js-safe', sequenceBit: 14 } });
    expect(typo.option).toBe('layout.sequenceBit');
    expect(typo.message).toMatch(/sequenceBits/);
    for (const layout of [42, null, ['twitter']]) {
      const error = await bootstrapError({ workerId: 1, layout });
      expect(error.option).toBe('layout');
      expect(error.message).toMatch(/twitter, default, js-safe/);
    }
  });

  it('boots with layout undefined (the default) or a preset name', async () => {
    for (const [layout, sequenceBits] of [
      [undefined, 12],
      ['js-safe', 9],
      [{ preset: 'twitter' }, 12],
    ] as const) {
      const service = await bootstrap(SnowflakeModule.forRoot({ workerId: 1, layout }));
      expect(service.layout.sequenceBits).toBe(sequenceBits);
    }
  });

  it('fails with negative or non-numeric time options', async () => {
    expect((await bootstrapError({ workerId: 1, clockBackToleranceMs: -1 })).option).toBe('clockBackToleranceMs');
    expect((await bootstrapError({ workerId: 1, maxSyncWaitMs: Number.NaN })).option).toBe('maxSyncWaitMs');
  });

  it('takes maxAsyncWaitMs (default 5000) and refuses a negative, infinite or non-numeric one, naming it', async () => {
    expect((await bootstrap(SnowflakeModule.forRoot({ workerId: 1 }))).maxAsyncWaitMs).toBe(5000);
    expect((await bootstrap(SnowflakeModule.forRoot({ workerId: 1, maxAsyncWaitMs: 0 }))).maxAsyncWaitMs).toBe(0);
    expect((await bootstrap(SnowflakeModule.forRoot({ workerId: 1, maxAsyncWaitMs: 2500 }))).maxAsyncWaitMs).toBe(2500);
    for (const bad of [-1, Infinity, Number.NaN, '5000']) {
      const error = await bootstrapError({ workerId: 1, maxAsyncWaitMs: bad });
      expect(error.option).toBe('maxAsyncWaitMs');
      expect(error.message).toMatch(/non-negative, finite number of milliseconds .*timeoutMs: Infinity/);
    }
  });

  it('fails when a factory resolves to something other than an object', async () => {
    for (const value of [null, 42]) {
      const failure = Test.createTestingModule({
        imports: [SnowflakeModule.forRootAsync({ useFactory: () => value as unknown as SnowflakeModuleOptions })],
      })
        .setLogger(quiet)
        .compile();
      await expect(failure).rejects.toBeInstanceOf(SnowflakeConfigError);
      await expect(failure).rejects.toMatchObject({ option: 'options' });
    }
  });

  it('requireSafeNumbers fails at bootstrap on a layout wider than 53 bits', async () => {
    const error = await bootstrapError({ workerId: 1, layout: 'twitter', requireSafeNumbers: true });
    expect(error.option).toBe('requireSafeNumbers');
    expect(error.message).toMatch(/63 bits/);
    expect(error.message).toMatch(/js-safe/);
  });

  it('requireSafeNumbers boots with js-safe, and nextNumber() then works', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ workerId: 1, layout: 'js-safe', requireSafeNumbers: true })],
    })
      .setLogger(quiet)
      .compile();
    await moduleRef.init();
    try {
      const n = moduleRef.get(IdService).nextNumber();
      expect(Number.isSafeInteger(n)).toBe(true);
      expect(moduleRef.get(IdService).decode(n).workerId).toBe(1);
    } finally {
      await moduleRef.close();
    }
  });

  it('without requireSafeNumbers, nextNumber() on a wide layout throws UnsafeNumberError when called', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [SnowflakeModule.forRoot({ workerId: 1 })] })
      .setLogger(quiet)
      .compile();
    await moduleRef.init();
    try {
      expect(() => moduleRef.get(IdService).nextNumber()).toThrow(UnsafeNumberError);
      expect(typeof moduleRef.get(IdService).next()).toBe('bigint');
    } finally {
      await moduleRef.close();
    }
  });
});

describe('unknown option keys, at every level', () => {
  it.each([
    [{ workerId: 1, layot: 'twitter' }, 'layot', 'layout'],
    [{ workerId: 1, clockBackTolerance: 5 }, 'clockBackTolerance', 'clockBackToleranceMs'],
    [{ redis: { url: 'redis://localhost:6379', ttl: 5000 } }, 'redis.ttl', 'ttlMs'],
    [{ redis: { url: 'redis://localhost:6379', namspace: 'a' } }, 'redis.namspace', 'namespace'],
    [{ workerId: 1, layout: { sequenceBit: 12 } }, 'layout.sequenceBit', 'sequenceBits'],
  ])('rejects %j, naming %s and suggesting %s', (options, path, suggestion) => {
    let caught: unknown;
    try {
      new IdService(options as SnowflakeModuleOptions);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SnowflakeConfigError);
    expect((caught as SnowflakeConfigError).option).toBe(path);
    expect((caught as Error).message).toContain(`did you mean \`${suggestion}\`?`);
  });

  it('names an unknown key with no close match without a guess, listing the valid ones', () => {
    expect(() => new IdService({ workerId: 1, zzzzzzzz: true } as SnowflakeModuleOptions)).toThrow(
      /`zzzzzzzz`: SnowflakeModule has no option "zzzzzzzz"\. Valid options: layout, workerId/,
    );
  });

  it('accepts isGlobal, which the module builder adds', () => {
    expect(() => new IdService({ workerId: 1, isGlobal: true } as SnowflakeModuleOptions)).not.toThrow();
  });
});
