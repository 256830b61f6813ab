/**
 * The health indicator on a named generator: `isHealthy(key, { generator })` reads that registration's status, and
 * only that one's.
 */
import 'reflect-metadata';
import type { LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { SnowflakeHealthIndicator, SnowflakeHealthModule } from '../../lib/health.js';
import { SnowflakeModule } from '../../lib/index.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

describe('SnowflakeHealthIndicator with named generators', () => {
  let moduleRef: TestingModule;
  let orders: StubWorkerSource;

  beforeEach(async () => {
    orders = new StubWorkerSource({ kind: 'hand', workerId: 31 });
    moduleRef = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({ workerId: 30 }),
        SnowflakeModule.forRoot({ name: 'orders', workerSource: orders }),
        SnowflakeHealthModule,
      ],
    })
      .setLogger(quiet)
      .compile();
    await moduleRef.init();
  });
  afterEach(() => moduleRef.close());

  it("checks the named registration's own status, and the default one without `generator`", () => {
    const indicator = moduleRef.get(SnowflakeHealthIndicator);
    expect(indicator.isHealthy('orders', { generator: 'orders' })).toEqual({
      orders: expect.objectContaining({ status: 'up', source: 'hand', workerId: 31 }) as unknown,
    });
    expect(indicator.isHealthy()).toEqual({
      snowflake: expect.objectContaining({ status: 'up', source: 'static', workerId: 30 }) as unknown,
    });
    expect(indicator.isHealthy('ids', { generator: 'default' }).ids).toMatchObject({ workerId: 30 });

    // The orders generator loses its worker ID: it goes down, the default one stays up.
    orders.context!.reassign(null);
    expect(indicator.isHealthy('orders', { generator: 'orders' }).orders).toMatchObject({
      status: 'down',
      reason: 'no-worker-id',
    });
    expect(indicator.isHealthy().snowflake.status).toBe('up');
  });

  it('reports a name the app does not register as not configured, listing the names it does', () => {
    const indicator = moduleRef.get(SnowflakeHealthIndicator);
    expect(indicator.isHealthy('invoices', { generator: 'invoices' }).invoices).toEqual({
      status: 'down',
      reason: 'not-configured',
      message: 'No SnowflakeModule registration named "invoices" in the application; it registers "default", "orders".',
    });
  });
});
