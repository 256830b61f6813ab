import 'reflect-metadata';
import { Inject, Injectable, Module, type LoggerService } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { BatchTooLargeError, ClockMovedBackError, WorkerUnavailableError } from '../../lib/core/errors.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { FakeClock } from '../support/fake-clock.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** An application provider that receives IdService by its type alone (constructor parameter metadata). */
@Injectable()
class OrderService {
  constructor(readonly ids: IdService) {}

  createOrder(): { id: bigint } {
    return { id: this.ids.next() };
  }
}

/** Options from a class, for forRootAsync({ useClass }). */
@Injectable()
class SnowflakeOptionsFromConfig {
  constructor(@Inject(ConfigService) private readonly config: ConfigService) {}

  createSnowflakeOptions(): SnowflakeModuleOptions {
    return { workerId: Number(this.config.get('SNOWFLAKE_WORKER_ID')), layout: 'twitter', datacenterId: 2 };
  }
}

const config = () => ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ SNOWFLAKE_WORKER_ID: '21' })] });

async function boot(imports: unknown[], providers: unknown[] = [OrderService]): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[], providers: providers as never[] })
    .setLogger(quiet)
    .compile();
  await moduleRef.init();
  return moduleRef;
}

function expectWorkingService(moduleRef: TestingModule, workerId: number, datacenterId: number): void {
  const service = moduleRef.get(IdService);
  const orders = moduleRef.get(OrderService);
  expect(orders.ids).toBe(service);
  expect(service.workerId).toBe(workerId);
  expect(service.datacenterId).toBe(datacenterId);
  const a = orders.createOrder().id;
  const b = service.next();
  expect(b).toBeGreaterThan(a);
  expect(service.decode(a)).toMatchObject({ workerId, datacenterId });
  expect(Math.abs(service.decode(b).timestamp - Date.now())).toBeLessThan(5000);
}

describe('SnowflakeModule in a Nest TestingModule', () => {
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('forRoot: IdService is injected by type into another provider', async () => {
    moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 5 })]);
    expectWorkingService(moduleRef, 5, 0);
    const service = moduleRef.get(IdService);
    expect(service.layout.epoch).toBe(resolveLayout().epoch);
    expect(service.status()).toMatchObject({ source: 'static', ready: true, workerId: 5, datacenterId: 0 });
  });

  it('forRoot: exposes the whole generator API', async () => {
    moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 1, layout: 'js-safe' })]);
    const service = moduleRef.get(IdService);
    // js-safe issues 512 IDs per 10 ms unit: a synchronous batch takes at most that many within maxSyncWaitMs.
    expect(() => service.nextBatch(1000)).toThrow(BatchTooLargeError);
    const batch = [...service.nextBatch(500), ...(await service.nextBatchAsync(500))];
    expect(batch).toHaveLength(1000);
    for (let i = 1; i < batch.length; i++) expect(batch[i]).toBeGreaterThan(batch[i - 1]);
    const n = service.nextNumber();
    expect(BigInt(n)).toBeGreaterThan(batch.at(-1)!);
    const s = service.nextString();
    expect(s).toMatch(/^[0-9]+$/);
    expect(BigInt(s)).toBeGreaterThan(BigInt(n));
    const viaAsync = await service.nextAsync();
    expect(viaAsync).toBeGreaterThan(BigInt(s));
    const parts = service.decode(s);
    expect(service.compose(parts)).toBe(BigInt(s));
    expect(service.minIdAt(parts.date)).toBeLessThanOrEqual(BigInt(s));
    expect(service.maxIdAt(parts.date)).toBeGreaterThanOrEqual(BigInt(s));
    expect(service.status().issued).toBe(1003);
  });

  it('forRootAsync with useFactory and an injected ConfigService', async () => {
    moduleRef = await boot([
      config(),
      SnowflakeModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (configService: ConfigService) => ({
          workerId: Number(configService.get('SNOWFLAKE_WORKER_ID')),
          layout: 'twitter',
          datacenterId: 9,
        }),
      }),
    ]);
    expectWorkingService(moduleRef, 21, 9);
    expect(moduleRef.get(IdService).layout.sequenceBits).toBe(12);
  });

  it('forRootAsync with an async useFactory', async () => {
    moduleRef = await boot([
      SnowflakeModule.forRootAsync({
        useFactory: async () => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return { workerId: 4 };
        },
      }),
    ]);
    expectWorkingService(moduleRef, 4, 0);
  });

  it('forRootAsync with useClass', async () => {
    moduleRef = await boot([
      config(),
      SnowflakeModule.forRootAsync({ imports: [ConfigModule], useClass: SnowflakeOptionsFromConfig }),
    ]);
    expectWorkingService(moduleRef, 21, 2);
  });

  it('forRootAsync with useExisting', async () => {
    @Module({ imports: [ConfigModule], providers: [SnowflakeOptionsFromConfig], exports: [SnowflakeOptionsFromConfig] })
    class OptionsModule {}
    moduleRef = await boot([
      config(),
      SnowflakeModule.forRootAsync({ imports: [OptionsModule], useExisting: SnowflakeOptionsFromConfig }),
    ]);
    expectWorkingService(moduleRef, 21, 2);
  });

  it("workerId: 'hostname' takes a StatefulSet pod's ordinal", async () => {
    moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 'hostname', hostname: 'api-3' })]);
    expectWorkingService(moduleRef, 3, 0);
    expect(moduleRef.get(IdService).status().source).toBe('hostname');
  });
});

describe('isGlobal', () => {
  @Module({ providers: [OrderService], exports: [OrderService] })
  class OrdersModule {}

  it('makes IdService injectable in modules that do not import SnowflakeModule', async () => {
    const moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 8, isGlobal: true }), OrdersModule], []);
    try {
      expect(moduleRef.get(OrderService).ids.workerId).toBe(8);
      expect(moduleRef.get(OrderService).ids).toBe(moduleRef.get(IdService));
    } finally {
      await moduleRef.close();
    }
  });

  it('also works with forRootAsync', async () => {
    const moduleRef = await boot(
      [SnowflakeModule.forRootAsync({ isGlobal: true, useFactory: () => ({ workerId: 6 }) }), OrdersModule],
      [],
    );
    try {
      expect(moduleRef.get(OrderService).ids.workerId).toBe(6);
    } finally {
      await moduleRef.close();
    }
  });

  it('is off by default: other modules then cannot resolve IdService', async () => {
    await expect(boot([SnowflakeModule.forRoot({ workerId: 8 }), OrdersModule], [])).rejects.toThrow(/IdService/);
  });
});

describe('two applications in one process', () => {
  it('keep their own worker IDs and layouts and do not interfere', async () => {
    const first = await boot([SnowflakeModule.forRoot({ workerId: 1, layout: 'twitter', datacenterId: 1 })]);
    const second = await boot([SnowflakeModule.forRoot({ workerId: 2, layout: 'twitter', datacenterId: 1 })]);
    const jsSafe = await boot([SnowflakeModule.forRoot({ workerId: 1, layout: 'js-safe' })]);
    try {
      const a = first.get(IdService);
      const b = second.get(IdService);
      const c = jsSafe.get(IdService);
      expect(a).not.toBe(b);
      expect([a.workerId, b.workerId, c.workerId]).toEqual([1, 2, 1]);
      expect(c.layout.totalBits).toBeLessThanOrEqual(53);

      const fromA: bigint[] = [];
      const fromB: bigint[] = [];
      for (let i = 0; i < 20_000; i++) {
        fromA.push(a.next());
        fromB.push(b.next());
        c.nextNumber();
      }
      const codec = new SnowflakeCodec(resolveLayout({ preset: 'twitter' }));
      expect(fromA.every((id) => codec.decode(id).workerId === 1)).toBe(true);
      expect(fromB.every((id) => codec.decode(id).workerId === 2)).toBe(true);
      expect(new Set([...fromA, ...fromB]).size).toBe(40_000);
      expect(a.status().issued).toBe(20_000);
      expect(b.status().issued).toBe(20_000);

      // Closing one application leaves the other issuing.
      await first.close();
      expect(() => a.next()).toThrow(/shutting down/);
      expect(b.next()).toBeGreaterThan(fromB.at(-1)!);
      expect(c.nextNumber()).toBeGreaterThan(0);
    } finally {
      await Promise.all([first.close(), second.close(), jsSafe.close()]);
    }
  });
});

describe('IdService with an injected clock', () => {
  const START = Date.UTC(2026, 10, 22, 12);

  it('passes a step back beyond the tolerance on as ClockMovedBackError, and reports how far behind the clock is', async () => {
    const clock = new FakeClock(START);
    const moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 3, clock, clockBackToleranceMs: 50 })]);
    try {
      const service = moduleRef.get(IdService);
      const first = service.next();
      clock.back(40);
      expect(service.next()).toBe(first + 1n);
      expect(service.status()).toMatchObject({ clockBehindMs: 40, clockBackEvents: 1, lastTimestampMs: START });
      clock.back(20);
      expect(() => service.next()).toThrow(ClockMovedBackError);
      await expect(service.nextAsync()).rejects.toBeInstanceOf(ClockMovedBackError);
      clock.set(START + 1);
      expect(service.next()).toBeGreaterThan(first + 1n);
      expect(service.status().clockBehindMs).toBe(0);
    } finally {
      await moduleRef.close();
    }
  });

  it('nextAsync() waits for the next time unit when the sequence is used up', async () => {
    const clock = new FakeClock(START);
    const moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 3, clock, maxSyncWaitMs: 2 })]);
    try {
      const service = moduleRef.get(IdService);
      const batch = service.nextBatch(4096);
      const pending = service.nextAsync();
      setTimeout(() => clock.advance(1), 20);
      const id = await pending;
      expect(id).toBeGreaterThan(batch.at(-1)!);
      expect(service.decode(id)).toMatchObject({ timestamp: START + 1, sequence: 0, workerId: 3 });
    } finally {
      await moduleRef.close();
    }
  });

  it('issues nothing once the application has shut down', async () => {
    const moduleRef = await boot([SnowflakeModule.forRoot({ workerId: 3, clock: new FakeClock(START) })]);
    const service = moduleRef.get(IdService);
    service.next();
    await moduleRef.close();
    let error: unknown;
    try {
      service.next();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WorkerUnavailableError);
    expect((error as WorkerUnavailableError).reason).toBe('stopped');
    await expect(service.nextAsync()).rejects.toBeInstanceOf(WorkerUnavailableError);
    expect(service.status()).toMatchObject({ ready: false, workerId: null });
  });
});
