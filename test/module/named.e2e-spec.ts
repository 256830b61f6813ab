/**
 * Several generators in one app against a real redis-server: a static default registration beside a named one that
 * leases its worker ID, and two named registrations sharing one lease namespace.
 */
import 'reflect-metadata';
import { Injectable, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { SnowflakeHealthIndicator, SnowflakeHealthModule } from '../../lib/health.js';
import { IdService, InjectIdService, SnowflakeCodec, SnowflakeModule, resolveLayout } from '../../lib/index.js';
import { settledSharedNamespace, sharedRedisUrl } from '../support/shared-redis.js';

const TTL = 1000;

/** Keeps every log line with its context, so the test can see which registration said what. */
class RecordingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string; context: string | undefined }> = [];
  log(message: unknown, context?: string): void {
    this.lines.push({ level: 'log', message: String(message), context });
  }
  warn(message: unknown, context?: string): void {
    this.lines.push({ level: 'warn', message: String(message), context });
  }
  error(message: unknown, context?: string): void {
    this.lines.push({ level: 'error', message: String(message), context });
  }
}

@Injectable()
class Checkout {
  constructor(
    readonly ids: IdService,
    @InjectIdService('orders') readonly orderIds: IdService,
  ) {}
}

@Injectable()
class Billing {
  constructor(
    @InjectIdService('orders') readonly orderIds: IdService,
    @InjectIdService('invoices') readonly invoiceIds: IdService,
  ) {}
}

describe('a static and a Redis-leased registration in one app (real redis-server)', () => {
  let admin: Redis;
  const modules: TestingModule[] = [];

  beforeAll(() => {
    admin = new Redis(sharedRedisUrl());
  });
  afterAll(() => {
    admin.disconnect();
  });
  afterEach(async () => {
    await Promise.all(modules.splice(0).map((moduleRef) => moduleRef.close().catch(() => undefined)));
  });

  async function boot(imports: unknown[], providers: unknown[], logger: LoggerService): Promise<TestingModule> {
    const moduleRef = await Test.createTestingModule({ imports: imports as never[], providers: providers as never[] })
      .setLogger(logger)
      .compile();
    modules.push(moduleRef);
    await moduleRef.init();
    return moduleRef;
  }

  it('issues from both, each under its own source, layout and log context, and releases the lease on close', async () => {
    const { url, namespace } = await settledSharedNamespace('named');
    const logger = new RecordingLogger();
    const moduleRef = await boot(
      [
        SnowflakeModule.forRoot({ workerId: 0 }),
        SnowflakeModule.forRootAsync({
          name: 'orders',
          // The name is known here; the options, the Redis address among them, come from the factory.
          useFactory: () => ({ layout: 'twitter' as const, redis: { url, namespace, ttlMs: TTL } }),
        }),
        TerminusModule,
        SnowflakeHealthModule,
      ],
      [Checkout],
      logger,
    );
    const { ids, orderIds } = moduleRef.get(Checkout);
    expect(ids.status()).toMatchObject({ source: 'static', ready: true, workerId: 0 });
    expect(orderIds.status()).toMatchObject({ source: 'redis', ready: true, lease: { state: 'held', namespace } });

    // The lease holds its worker ID in Redis, for this process.
    const recordKey = `snowflake:{${namespace}:dc0}:w:${orderIds.workerId}`;
    const record = await admin.hgetall(recordKey);
    expect(record.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(record.pid)).toBe(process.pid);

    // A lease namespace is an ID space of its own: its first claim takes worker 0, the number the static default
    // registration uses, and the process-wide guard (which is about static worker IDs) lets both run.
    expect(orderIds.workerId).toBe(0);

    const twitter = new SnowflakeCodec(resolveLayout('twitter'));
    const standard = new SnowflakeCodec(resolveLayout('default'));
    const plain: bigint[] = [];
    const orders: bigint[] = [];
    for (let i = 0; i < 5000; i++) {
      plain.push(ids.next());
      orders.push(await orderIds.nextAsync());
    }
    expect(new Set(plain).size).toBe(plain.length);
    expect(new Set(orders).size).toBe(orders.length);
    expect(orders.every((id) => twitter.decode(id).workerId === orderIds.workerId)).toBe(true);
    expect(Math.abs(twitter.decode(orders.at(-1)!).timestamp - Date.now())).toBeLessThan(5000);
    expect(Math.abs(standard.decode(plain.at(-1)!).timestamp - Date.now())).toBeLessThan(5000);

    // Each registration logs under a context of its own.
    const claimed = logger.lines.find((line) => line.message.startsWith('Claimed worker ID'));
    expect(claimed?.context).toBe('Snowflake:orders');
    expect(logger.lines.find((line) => line.message.startsWith('Using static worker ID'))?.context).toBe('Snowflake');

    // The health indicator reads the lease of the named one.
    const health = moduleRef.get(SnowflakeHealthIndicator);
    expect(health.isHealthy('orders', { generator: 'orders' }).orders).toMatchObject({
      status: 'up',
      source: 'redis',
      namespace,
      leaseState: 'held',
    });
    expect(health.isHealthy().snowflake).toMatchObject({ status: 'up', source: 'static' });

    await moduleRef.close();
    modules.splice(modules.indexOf(moduleRef), 1);
    expect((await admin.hgetall(recordKey)).token).toBeUndefined();
  });

  it('two named registrations leasing in one namespace hold distinct worker IDs, so their IDs never meet', async () => {
    const { url, namespace } = await settledSharedNamespace('named');
    const logger = new RecordingLogger();
    const redis = { url, namespace, ttlMs: TTL };
    const moduleRef = await boot(
      [SnowflakeModule.forRoot({ name: 'orders', redis }), SnowflakeModule.forRoot({ name: 'invoices', redis })],
      [Billing],
      logger,
    );
    const { orderIds, invoiceIds } = moduleRef.get(Billing);
    expect(orderIds.workerId).not.toBe(invoiceIds.workerId);
    const all = new Set<bigint>();
    for (let i = 0; i < 5000; i++) {
      all.add(await orderIds.nextAsync());
      all.add(await invoiceIds.nextAsync());
    }
    expect(all.size).toBe(10_000);
    expect(
      logger.lines.some(
        (line) =>
          line.level === 'warn' && /runs 2 Redis leases in namespace/.test(line.message) && /named/.test(line.message),
      ),
    ).toBe(true);
  });
});
