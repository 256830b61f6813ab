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
});
