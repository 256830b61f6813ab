/**
 * Several generators in one app: named registrations beside the default one, on static worker IDs.
 * (One static and one Redis-leased registration side by side: named.e2e-spec.ts.)
 */
import 'reflect-metadata';
import { Injectable, Module, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { SnowflakeConfigError, WorkerIdInUseError } from '../../lib/core/errors.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { IdService } from '../../lib/module/id.service.js';
import { DuplicateGeneratorNameError } from '../../lib/module/snowflake.errors.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { getIdServiceToken, InjectIdService } from '../../lib/module/snowflake.names.js';
import { SnowflakeRegistry } from '../../lib/module/snowflake.registry.js';
import { SNOWFLAKE_GENERATOR } from '../../lib/module/snowflake.tokens.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** Takes the default generator by class, as every app did before names, and the orders generator by name. */
@Injectable()
class Checkout {
  constructor(
    readonly ids: IdService,
    @InjectIdService('orders') readonly orderIds: IdService,
  ) {}
}

/** Takes only the orders generator. */
@Injectable()
class OrdersOnly {
  constructor(@InjectIdService('orders') readonly orderIds: IdService) {}
}

const opened: TestingModule[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((moduleRef) => moduleRef.close()));
});

async function boot(imports: unknown[], providers: unknown[] = []): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[], providers: providers as never[] })
    .setLogger(quiet)
    .compile();
  opened.push(moduleRef);
  await moduleRef.init();
  return moduleRef;
}

/** What compile() fails with, or undefined when it succeeds (then the module is closed). */
async function bootError(imports: unknown[]): Promise<unknown> {
  try {
    await boot(imports);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('a named registration beside the default one', () => {
  it('injects each by its token: the default by class, the named one with @InjectIdService(name)', async () => {
    const moduleRef = await boot(
      [
        SnowflakeModule.forRoot({ workerId: 1 }),
        SnowflakeModule.forRoot({ name: 'orders', workerId: 2, layout: 'twitter', datacenterId: 3 }),
      ],
      [Checkout],
    );
    const checkout = moduleRef.get(Checkout);
    expect(checkout.ids).toBe(moduleRef.get(IdService));
    expect(checkout.orderIds).toBe(moduleRef.get(getIdServiceToken('orders')));
    expect(checkout.ids).not.toBe(checkout.orderIds);
    expect([checkout.ids.name, checkout.orderIds.name]).toEqual(['default', 'orders']);
    expect(getIdServiceToken()).toBe(IdService);
    expect(getIdServiceToken('default')).toBe(IdService);

    // Each issues in its own layout, under its own worker.
    const plain = checkout.ids.next();
    const order = checkout.orderIds.next();
    expect(checkout.ids.decode(plain)).toMatchObject({ workerId: 1, datacenterId: 0 });
    expect(new SnowflakeCodec(resolveLayout('twitter')).decode(order)).toMatchObject({ workerId: 2, datacenterId: 3 });
    expect(checkout.orderIds.layout).toEqual(resolveLayout('twitter'));
    expect(checkout.ids.layout).toEqual(resolveLayout('default'));
    expect(checkout.orderIds.status()).toMatchObject({ source: 'static', ready: true, workerId: 2 });
  });

  it('works with forRootAsync, the name given beside the factory', async () => {
    const moduleRef = await boot(
      [
        SnowflakeModule.forRootAsync({ useFactory: () => ({ workerId: 4 }) }),
        SnowflakeModule.forRootAsync({
          name: 'orders',
          useFactory: async () => {
            await new Promise((resolve) => setTimeout(resolve, 2));
            return { workerId: 5, layout: 'js-safe' as const };
          },
        }),
      ],
      [Checkout],
    );
    const { ids, orderIds } = moduleRef.get(Checkout);
    expect([ids.workerId, orderIds.workerId]).toEqual([4, 5]);
    expect(orderIds.layout.totalBits).toBeLessThanOrEqual(53);
    expect(orderIds.nextNumber()).toBeGreaterThan(0);
  });

  it("treats name: 'default' as the default registration", async () => {
    const moduleRef = await boot([SnowflakeModule.forRoot({ name: 'default', workerId: 6 })]);
    expect(moduleRef.get(IdService).workerId).toBe(6);
    expect(moduleRef.get(IdService).name).toBe('default');
  });

  it('needs no default registration: a named one alone does not answer for IdService by class', async () => {
    const moduleRef = await boot([SnowflakeModule.forRoot({ name: 'orders', workerId: 7 })], [OrdersOnly]);
    expect(moduleRef.get(OrdersOnly).orderIds.workerId).toBe(7);
    expect(() => moduleRef.get(IdService)).toThrow();
    // Nor does it export its parts under the default tokens, which belong to the default registration.
    expect(() => moduleRef.get(SNOWFLAKE_GENERATOR)).toThrow();
  });

  it('keeps the default by class when the named one is imported first', async () => {
    const moduleRef = await boot(
      [
        SnowflakeModule.forRoot({ name: 'orders', workerId: 9, isGlobal: true }),
        SnowflakeModule.forRoot({ workerId: 8 }),
      ],
      [Checkout],
    );
    expect(moduleRef.get(Checkout).ids.workerId).toBe(8);
    expect(moduleRef.get(Checkout).orderIds.workerId).toBe(9);
  });
});

describe('isGlobal, per registration', () => {
  @Module({ providers: [OrdersOnly], exports: [OrdersOnly] })
  class OrdersFeature {}

  @Module({ providers: [Checkout], exports: [Checkout] })
  class CheckoutFeature {}

  it('makes a named service injectable in modules that do not import it', async () => {
    const moduleRef = await boot([
      SnowflakeModule.forRoot({ workerId: 1 }),
      SnowflakeModule.forRoot({ name: 'orders', workerId: 2, isGlobal: true }),
      OrdersFeature,
    ]);
    expect(moduleRef.get(OrdersFeature, { strict: false })).toBeDefined();
    expect(moduleRef.get(OrdersOnly, { strict: false }).orderIds.workerId).toBe(2);
  });

  it('leaves the other registration local: the default one is not seen from a feature module', async () => {
    const error = await bootError([
      SnowflakeModule.forRoot({ workerId: 1 }),
      SnowflakeModule.forRoot({ name: 'orders', workerId: 2, isGlobal: true }),
      CheckoutFeature,
    ]);
    expect(String(error)).toMatch(/IdService/);
  });

  it('is off by default for a named registration too', async () => {
    const error = await bootError([SnowflakeModule.forRoot({ name: 'orders', workerId: 2 }), OrdersFeature]);
    expect(String(error)).toMatch(/nestjs-snowflake:orders:IdService/);
  });
});

describe('names', () => {
  it('refuses a name given twice in one app at bootstrap, in forRoot and forRootAsync alike', async () => {
    for (const second of [
      SnowflakeModule.forRoot({ name: 'orders', workerId: 12 }),
      SnowflakeModule.forRootAsync({ name: 'orders', useFactory: () => ({ workerId: 12 }) }),
    ]) {
      const error = await bootError([SnowflakeModule.forRoot({ name: 'orders', workerId: 11 }), second]);
      expect(error).toBeInstanceOf(DuplicateGeneratorNameError);
      expect(error).toBeInstanceOf(SnowflakeConfigError);
      expect((error as Error).message).toMatch(/registrations of this app are named "orders"/);
      expect((error as Error).message).toContain('isGlobal: true');
    }
  });

  it('allows the same name in two apps of one process (the registry is per app)', async () => {
    const a = await boot([SnowflakeModule.forRoot({ name: 'orders', workerId: 13 })], [OrdersOnly]);
    const b = await boot([SnowflakeModule.forRoot({ name: 'orders', workerId: 14 })], [OrdersOnly]);
    expect(a.get(OrdersOnly).orderIds.workerId).toBe(13);
    expect(b.get(OrdersOnly).orderIds.workerId).toBe(14);
    expect(a.get(SnowflakeRegistry, { strict: false })).not.toBe(b.get(SnowflakeRegistry, { strict: false }));
  });

  it('keeps allowing several default registrations, each with its own worker ID, as before names', async () => {
    const moduleRef = await boot([
      SnowflakeModule.forRoot({ workerId: 15 }),
      SnowflakeModule.forRoot({ workerId: 16 }),
    ]);
    const registry = moduleRef.get(SnowflakeRegistry, { strict: false });
    expect(registry.names()).toEqual(['default']);
    expect([15, 16]).toContain(registry.get()!.workerId);
  });

  it('refuses a name in the options a factory returns, saying where it belongs', async () => {
    const error = await bootError([
      SnowflakeModule.forRootAsync({ useFactory: () => ({ workerId: 17, name: 'orders' }) as never }),
    ]);
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as Error).message).toMatch(/option `name`: give the name to forRootAsync\(\{ name, useFactory/);
  });

  it('refuses a malformed name where the module is declared', () => {
    for (const name of ['', ' orders', 'a/b', 5 as unknown as string]) {
      expect(() => SnowflakeModule.forRoot({ name, workerId: 1 })).toThrow(
        /option `name`: expected a registration name/,
      );
      expect(() => SnowflakeModule.forRootAsync({ name, useFactory: () => ({ workerId: 1 }) })).toThrow(
        SnowflakeConfigError,
      );
    }
    expect(() => getIdServiceToken('')).toThrow(SnowflakeConfigError);
  });
});

describe('the guard: one generator per static worker ID in a process', () => {
  it('refuses a named registration on the worker ID and datacenter of the default one, whatever the layouts', async () => {
    const error = await bootError([
      SnowflakeModule.forRoot({ workerId: 20 }),
      SnowflakeModule.forRoot({
        name: 'orders',
        workerId: 20,
        layout: { preset: 'default', epoch: Date.UTC(2025, 0, 1) },
      }),
    ]);
    expect(error).toBeInstanceOf(WorkerIdInUseError);
    expect((error as Error).message).toMatch(/Worker ID 20 \(datacenter 0\) is already used/);
  });

  it('refuses two named registrations on one worker ID, also across apps of the process', async () => {
    expect(
      await bootError([
        SnowflakeModule.forRoot({ name: 'orders', workerId: 21, layout: 'twitter' }),
        SnowflakeModule.forRoot({ name: 'invoices', workerId: 21, layout: 'twitter' }),
      ]),
    ).toBeInstanceOf(WorkerIdInUseError);
    await boot([SnowflakeModule.forRoot({ name: 'orders', workerId: 22 })]);
    expect(await bootError([SnowflakeModule.forRoot({ name: 'invoices', workerId: 22 })])).toBeInstanceOf(
      WorkerIdInUseError,
    );
  });

  it('allows registrations on distinct worker IDs or datacenters, and frees the worker ID when the app closes', async () => {
    const moduleRef = await boot([
      SnowflakeModule.forRoot({ workerId: 23, layout: 'twitter', datacenterId: 1 }),
      SnowflakeModule.forRoot({ name: 'orders', workerId: 23, layout: 'twitter', datacenterId: 2 }),
      SnowflakeModule.forRoot({ name: 'invoices', workerId: 24, layout: 'twitter', datacenterId: 1 }),
    ]);
    const registry = moduleRef.get(SnowflakeRegistry, { strict: false });
    const ids = ['default', 'orders', 'invoices'].map((name) => registry.get(name)!);
    const issued = new Set<bigint>();
    for (let i = 0; i < 5000; i++) for (const service of ids) issued.add(service.next());
    expect(issued.size).toBe(15_000);
    await moduleRef.close();
    opened.splice(opened.indexOf(moduleRef), 1);
    await boot([SnowflakeModule.forRoot({ name: 'orders', workerId: 23, layout: 'twitter', datacenterId: 2 })]);
  });
});

describe('IdService.current(name)', () => {
  it('finds the running service of a name, and says which names run when asked for another', async () => {
    const moduleRef = await boot(
      [SnowflakeModule.forRoot({ name: 'orders', workerId: 30, layout: 'twitter' })],
      [OrdersOnly],
    );
    expect(IdService.current('orders')).toBe(moduleRef.get(OrdersOnly).orderIds);
    expect(() => IdService.current('invoices')).toThrow(/no IdService named "invoices".*running: "orders"/);
    expect(() => IdService.current()).toThrow(/Only named registrations run \("orders"\): pass `generator`/);
  });
});
