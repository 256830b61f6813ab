import 'reflect-metadata';
import { Body, Controller, Get, Module, Post, Query, ValidationPipe, type INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import { IdService, SnowflakeModule } from '../../lib/index.js';
import { ParseSnowflakeIdPipe, SnowflakeIdBody, SnowflakeIdParam, SnowflakeIdQuery } from '../../lib/http.js';

@Controller()
class ItemsController {
  @Get('items/:id')
  find(@SnowflakeIdParam('id') id: bigint) {
    return { id: String(id), type: typeof id };
  }

  @Get('items')
  list(@SnowflakeIdQuery('after', { optional: true }) after?: bigint) {
    return { after: after === undefined ? 'absent' : String(after), type: typeof after };
  }

  @Post('orders')
  create(
    @SnowflakeIdBody('userId') userId: bigint,
    @SnowflakeIdBody('couponId', { optional: true }) couponId?: bigint,
  ) {
    return {
      userId: String(userId),
      type: typeof userId,
      couponId: couponId === undefined ? 'absent' : String(couponId),
    };
  }

  /** An inherited name is no query value: `toString` comes from Object.prototype. */
  @Get('inherited')
  inherited(@SnowflakeIdQuery('toString', { optional: true }) value?: bigint) {
    return { value: value === undefined ? 'absent' : String(value) };
  }

  /** The plain form, which a global ValidationPipe breaks before the ID pipe runs. */
  @Get('plain')
  plain(@Query('after', new ParseSnowflakeIdPipe({ optional: true })) after?: bigint) {
    return { after: after === undefined ? 'absent' : String(after) };
  }

  @Post('plain')
  plainBody(@Body('userId', ParseSnowflakeIdPipe) userId: bigint) {
    return { userId: String(userId) };
  }
}

@Module({ imports: [SnowflakeModule.forRoot({ workerId: 1, layout: 'js-safe' })], controllers: [ItemsController] })
class AppModule {}

type Adapter = 'express' | 'fastify';

async function boot(
  pipe: ValidationPipe,
  adapter: Adapter = 'express',
): Promise<{ app: INestApplication; server: Server; valid: string }> {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app =
    adapter === 'express'
      ? moduleRef.createNestApplication({ logger: false })
      : moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(pipe);
  await app.init();
  if (adapter === 'fastify') await (app as NestFastifyApplication).getHttpAdapter().getInstance().ready();
  return { app, server: app.getHttpServer() as Server, valid: app.get(IdService).nextString() };
}

describe.each<[string, Adapter, ConstructorParameters<typeof ValidationPipe>[0]]>([
  ['express, transform', 'express', { transform: true }],
  ['express, transform and whitelist', 'express', { transform: true, whitelist: true, forbidNonWhitelisted: true }],
  ['express, validating custom decorators', 'express', { transform: true, validateCustomDecorators: true }],
  ['fastify, transform and whitelist', 'fastify', { transform: true, whitelist: true }],
])('ID decorators beside a global ValidationPipe (%s)', (_name, adapter, options) => {
  let app: INestApplication;
  let server: Server;
  let valid: string;

  beforeAll(async () => {
    ({ app, server, valid } = await boot(new ValidationPipe(options), adapter));
  });
  afterAll(() => app.close());

  it('lets an absent optional query value through as undefined', async () => {
    await request(server).get('/items').expect(200, { after: 'absent', type: 'undefined' });
  });

  it('hands a valid ID to the handler as a bigint', async () => {
    await request(server).get(`/items?after=${valid}`).expect(200, { after: valid, type: 'bigint' });
    await request(server).get(`/items/${valid}`).expect(200, { id: valid, type: 'bigint' });
  });

  it.each([
    ['letters', '12ab', /not|digits/],
    ['a negative number', '-1', /digits/],
    ['an ID wider than the layout', String(2n ** 60n), /wider than the layout's 53 bits/],
  ])('answers 400 naming the parameter for %s', async (_what, text, reason) => {
    const query = await request(server)
      .get(`/items?after=${encodeURIComponent(text)}`)
      .expect(400);
    expect(query.body).toMatchObject({ statusCode: 400, error: 'Bad Request', type: 'InvalidSnowflakeError' });
    expect(query.body.message).toMatch(/^after: Invalid snowflake ID/);
    expect(query.body.message).toMatch(reason);
    const param = await request(server)
      .get(`/items/${encodeURIComponent(text)}`)
      .expect(400);
    expect(param.body.message).toMatch(/^id: Invalid snowflake ID/);
    const body = await request(server).post('/orders').send({ userId: text }).expect(400);
    expect(body.body.message).toMatch(/^userId: Invalid snowflake ID/);
  });

  it('reads a body field: an exact ID, and 400 (not 500) for one left out, an object or a rounded number', async () => {
    await request(server)
      .post('/orders')
      .send({ userId: valid })
      .expect(201, { userId: valid, type: 'bigint', couponId: 'absent' });
    await request(server)
      .post('/orders')
      .send({ userId: valid, couponId: '7' })
      .expect(201, { userId: valid, type: 'bigint', couponId: '7' });
    for (const body of ['{}', '{"userId": {}}', '{"userId": 9007199254740993}', '{"userId": null}']) {
      const response = await request(server).post('/orders').set('content-type', 'application/json').send(body);
      expect({ body, status: response.status }).toEqual({ body, status: 400 });
      expect(response.body.message).toMatch(/^userId: Invalid snowflake ID/);
    }
  });

  it('reads only values the request holds: an inherited name is absent', async () => {
    await request(server).get('/inherited').expect(200, { value: 'absent' });
  });
});

describe('the plain pipe form beside a global ValidationPipe({ transform: true })', () => {
  let app: INestApplication;
  let server: Server;

  beforeAll(async () => {
    ({ app, server } = await boot(new ValidationPipe({ transform: true })));
  });
  afterAll(() => app.close());

  // Why the decorators exist: ValidationPipe runs before the parameter's own pipe and builds the BigInt itself.
  it('still fails on an absent value, inside Nest, before the ID pipe runs', async () => {
    await request(server).get('/plain').expect(500);
    // The same for a body field: `@SnowflakeIdBody()` is the form that works.
    await request(server).post('/plain').send({}).expect(500);
  });
});
