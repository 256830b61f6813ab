import 'reflect-metadata';
import { Controller, Get, Module, UseInterceptors, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import { snowflakeJsonReplacer } from '../../lib/json/bigint-json.js';
import { BigIntSerializerInterceptor } from '../../lib/json/bigint-serializer.interceptor.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';

const WORKER_ID = 12;

/** Keeps every ID the controllers returned, to compare with what the client received. */
class Issued {
  readonly ids: bigint[] = [];
  add<T extends bigint>(id: T): T {
    this.ids.push(id);
    return id;
  }
}

/** An amount whose toJSON() hands JSON.stringify a bigint. */
class Money {
  constructor(readonly cents: bigint) {}
  toJSON() {
    return { cents: this.cents, currency: 'EUR' };
  }
}

@Controller('orders')
class OrdersController {
  constructor(
    private readonly ids: IdService,
    private readonly issued: Issued,
  ) {}

  @Get('one')
  one() {
    const id = this.issued.add(this.ids.next());
    return { id, createdAt: new Date(0), items: [{ sku: 'a', lineId: this.issued.add(this.ids.next()) }] };
  }

  @Get('shapes')
  shapes() {
    const id = this.issued.add(this.ids.next());
    return {
      price: new Money(id),
      ids: BigInt64Array.of(id),
      boxed: Object(id) as unknown,
      byId: new Map([['a', id]]),
    };
  }

  @Get('batch')
  batch() {
    return this.ids.nextBatch(3).map((id) => this.issued.add(id));
  }
}

/** The same routes with the interceptor applied per controller. */
@Controller('intercepted')
@UseInterceptors(BigIntSerializerInterceptor)
class InterceptedController extends OrdersController {}

type Setup = 'global interceptor' | 'controller interceptor' | 'express json replacer' | 'neither';

async function createApp(setup: Setup, errors: string[]): Promise<{ app: INestApplication; issued: Issued }> {
  const logger: LoggerService = {
    log() {},
    warn() {},
    debug() {},
    verbose() {},
    error(message: unknown, ...rest: unknown[]) {
      errors.push([message, ...rest].map((part) => (part instanceof Error ? part.message : String(part))).join(' '));
    },
  };
  const issued = new Issued();
  @Module({
    imports: [SnowflakeModule.forRoot({ workerId: WORKER_ID })],
    controllers: [OrdersController, InterceptedController],
    providers: [{ provide: Issued, useValue: issued }],
  })
  class AppModule {}

  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger });
  if (setup === 'global interceptor') app.useGlobalInterceptors(new BigIntSerializerInterceptor());
  if (setup === 'express json replacer') app.getHttpAdapter().getInstance().set('json replacer', snowflakeJsonReplacer);
  await app.listen(0, '127.0.0.1');
  return { app, issued };
}

describe.each<[Setup, string]>([
  ['global interceptor', '/orders'],
  ['controller interceptor', '/intercepted'],
  ['express json replacer', '/orders'],
])('a controller returning bigint IDs, with the %s', (setup, prefix) => {
  let app: INestApplication;
  let issued: Issued;
  const errors: string[] = [];

  beforeAll(async () => {
    ({ app, issued } = await createApp(setup, errors));
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers JSON with each ID as its exact decimal string', async () => {
    const response = await request(app.getHttpServer() as Server)
      .get(`${prefix}/one`)
      .expect(200);
    expect(response.headers['content-type']).toMatch(/application\/json/);
    const [id, lineId] = issued.ids.slice(-2) as [bigint, bigint];
    // 64-bit IDs lie beyond 2^53: as JSON numbers they would arrive rounded.
    expect(id).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
    expect(response.text).toContain(`"id":"${id}"`);
    expect(response.body).toEqual({
      id: id.toString(),
      createdAt: new Date(0).toISOString(),
      items: [{ sku: 'a', lineId: lineId.toString() }],
    });
    const service = app.get(IdService);
    expect(service.decode(response.body.id as string).workerId).toBe(WORKER_ID);
    expect(errors).toEqual([]);
  });

  it('renders toJSON() results, 64-bit integer arrays and boxed bigints with string IDs, Maps as {}', async () => {
    const response = await request(app.getHttpServer() as Server)
      .get(`${prefix}/shapes`)
      .expect(200);
    const id = String(issued.ids.at(-1));
    expect(response.body).toEqual({ price: { cents: id, currency: 'EUR' }, ids: [id], boxed: id, byId: {} });
    expect(errors).toEqual([]);
  });

  it('renders an array of IDs as strings', async () => {
    const response = await request(app.getHttpServer() as Server)
      .get(`${prefix}/batch`)
      .expect(200);
    expect(response.body).toEqual(issued.ids.slice(-3).map(String));
  });
});

describe('a controller returning bigint IDs without the interceptor or replacer', () => {
  it('answers 500, because JSON.stringify cannot serialize a BigInt', async () => {
    const errors: string[] = [];
    const { app } = await createApp('neither', errors);
    try {
      const server = app.getHttpServer() as Server;
      const response = await request(server).get('/orders/one').expect(500);
      expect(response.body).toEqual({ statusCode: 500, message: 'Internal server error' });
      expect(errors.join('\n')).toMatch(/Do not know how to serialize a BigInt/);
      // The same app answers with strings on the route that opts in.
      await request(server).get('/intercepted/one').expect(200);
      // The library left BigInt.prototype alone.
      expect('toJSON' in BigInt.prototype).toBe(false);
    } finally {
      await app.close();
    }
  });
});
