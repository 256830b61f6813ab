/**
 * `@SnowflakeIdParam(name, { generator })` and `@SnowflakeIdQuery(name, { generator })` on a real app with two
 * registrations of different layouts, beside a global `ValidationPipe({ transform: true })`: the options reach the ID
 * pipe, so each value is parsed in its registration's layout. Malformed options fail where the controller is declared.
 */
import 'reflect-metadata';
import { Controller, Get, Module, ValidationPipe, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import {
  base32Form,
  getIdServiceToken,
  IdService,
  ParseSnowflakeIdPipe,
  type ParseSnowflakeIdPipeOptions,
  SnowflakeIdParam,
  SnowflakeIdQuery,
  SnowflakeModule,
} from '../../lib/index.js';

@Controller('orders')
class OrdersController {
  @Get(':id')
  find(
    @SnowflakeIdParam('id', { generator: 'orders' }) id: bigint,
    @SnowflakeIdQuery('customer', { optional: true }) customer?: bigint,
    @SnowflakeIdQuery('after', { generator: 'orders', optional: true }) after?: bigint,
  ) {
    return { id: String(id), customer: customer?.toString(), after: after?.toString() };
  }
}

@Module({
  imports: [
    SnowflakeModule.forRoot({ workerId: 1 }),
    SnowflakeModule.forRoot({ name: 'orders', workerId: 2, layout: 'js-safe' }),
  ],
  controllers: [OrdersController],
})
class AppModule {}

describe('@SnowflakeIdParam() and @SnowflakeIdQuery() with { generator }', () => {
  let app: INestApplication;
  let server: Server;
  let orderIds: IdService;
  let ids: IdService;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalPipes(new ValidationPipe({ transform: true, validateCustomDecorators: true }));
    await app.init();
    server = app.getHttpServer() as Server;
    orderIds = app.get<IdService>(getIdServiceToken('orders'));
    ids = app.get(IdService);
  });
  afterAll(() => app.close());

  it("parses each value in its registration's layout", async () => {
    const order = orderIds.nextString();
    const later = orderIds.nextString();
    const customer = ids.nextString();
    expect(BigInt(customer)).toBeGreaterThan(2n ** 53n);
    await request(server)
      .get(`/orders/${order}?customer=${customer}&after=${later}`)
      .expect(200, { id: order, customer, after: later });
    await request(server).get(`/orders/${order}`).expect(200, { id: order });
  });

  it("answers 400 for an ID of the 63-bit space where the orders' 53-bit one is expected", async () => {
    const customer = ids.nextString();
    const param = await request(server).get(`/orders/${customer}`).expect(400);
    expect(param.body).toMatchObject({
      type: 'InvalidSnowflakeError',
      message: expect.stringMatching(/^id: .*wider than the layout's 53 bits/),
    });
    const query = await request(server).get(`/orders/${orderIds.nextString()}?after=${customer}`).expect(400);
    expect(query.body.message).toMatch(/^after: .*wider than the layout's 53 bits/);
  });
});

describe('the ID pipe options, checked where they are declared', () => {
  it('refuse a misspelt key and a malformed generator name', () => {
    expect(() => SnowflakeIdParam('id', { generater: 'orders' } as never)).toThrow(
      /ParseSnowflakeIdPipe has no option "generater"; did you mean `generator`\?/,
    );
    expect(() => SnowflakeIdQuery('after', { optinal: true } as never)).toThrow(/did you mean `optional`\?/);
    expect(() => new ParseSnowflakeIdPipe({ generator: 'two words' })).toThrow(
      /`generator`: ParseSnowflakeIdPipe expected the name of a SnowflakeModule registration/,
    );
  });

  it('refuse a status code with no Nest HTTP error and an exception factory that is no function', () => {
    // From JavaScript, or past a cast: the pipe would otherwise fail at the first bad request ("not a constructor").
    expect(
      () => new ParseSnowflakeIdPipe(JSON.parse('{ "errorHttpStatusCode": 429 }') as ParseSnowflakeIdPipeOptions),
    ).toThrow(
      /`errorHttpStatusCode`: ParseSnowflakeIdPipe answers with one of Nest's HTTP errors \(400, .*\), got 429/,
    );
    expect(() => SnowflakeIdQuery('after', { exceptionFactory: 'oops' } as never)).toThrow(
      /`exceptionFactory`: ParseSnowflakeIdPipe expected a function/,
    );
    expect(() => new ParseSnowflakeIdPipe({ errorHttpStatusCode: 422 })).not.toThrow();
  });

  // Found by a review: each was accepted, and every request with a value then failed with a TypeError (a 500), or an
  // absent value still answered 400.
  it('refuse a form that is no SnowflakeIdForm and an optional that is no boolean', () => {
    expect(() => new ParseSnowflakeIdPipe({ form: base32Form } as never)).toThrow(
      /`form`: ParseSnowflakeIdPipe expected a SnowflakeIdForm/,
    );
    expect(() => SnowflakeIdParam('id', { form: 'base32' } as never)).toThrow(/`form`: ParseSnowflakeIdPipe/);
    expect(() => SnowflakeIdQuery('after', { optional: 'true' } as never)).toThrow(
      /`optional`: expected true or false, got/,
    );
    expect(() => new ParseSnowflakeIdPipe({ form: base32Form(), optional: true })).not.toThrow();
  });
});

describe('an ID pipe instance, apps of other layouts one after another in one process', () => {
  // Found by a review: the instance kept the first app's IdService, and answered 400 to the next app's own IDs.
  it('reads each value in the layout of the app that runs now', async () => {
    const pipe = new ParseSnowflakeIdPipe();
    const meta = { type: 'param', data: 'id' } as const;
    const narrow = new IdService({ workerId: 1, workerLock: false, layout: 'js-safe' });
    await narrow.onModuleInit();
    expect(pipe.transform('5', meta)).toBe(5n);
    await narrow.onApplicationShutdown();
    const wide = new IdService({ workerId: 1, workerLock: false, layout: 'twitter' });
    await wide.onModuleInit();
    try {
      const id = wide.next();
      expect(id).toBeGreaterThan(2n ** 53n);
      expect(pipe.transform(id.toString(), meta)).toBe(id);
    } finally {
      await wide.onApplicationShutdown();
    }
  });
});
