import 'reflect-metadata';
import { Body, Controller, Get, Module, Param, Post, Query, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import {
  IdService,
  ParseSnowflakeIdPipe,
  SnowflakeIdParam,
  SnowflakeModule,
  appPublicIdForm,
  base32Form,
  base62Form,
} from '../../lib/index.js';

const KEY = 'pipe-test-key-0123456789abcdef-01';
const users = base32Form({ prefix: 'user', bits: 53 });

@Controller()
class ItemsController {
  @Get('users/:id')
  user(@Param('id', new ParseSnowflakeIdPipe({ form: users })) id: bigint) {
    return { id: String(id) };
  }

  @Get('decorated/:id')
  decorated(@SnowflakeIdParam('id', { form: users }) id: bigint) {
    return { id: String(id) };
  }

  @Get('wide/:id')
  wide(@Param('id', new ParseSnowflakeIdPipe({ form: base62Form() })) id: bigint) {
    return { id: String(id) };
  }

  @Get('public/:id')
  byPublicId(@Param('id', new ParseSnowflakeIdPipe({ form: appPublicIdForm() })) id: bigint) {
    return { id: String(id) };
  }

  @Post('public')
  byPublicIdInBody(@Body('id', new ParseSnowflakeIdPipe({ form: appPublicIdForm() })) id: bigint) {
    return { id: String(id) };
  }

  @Get('optional')
  optional(@Query('after', new ParseSnowflakeIdPipe({ form: users, optional: true })) after?: bigint) {
    return { after: after === undefined ? 'absent' : String(after) };
  }
}

@Module({
  imports: [
    // Keys from configuration: the pipe's form is written before they are known, and reaches them at run time.
    // 32 check bits: an altered public ID passes with a probability below 2^-32, so no test run meets one.
    SnowflakeModule.forRootAsync({
      useFactory: async () => ({ workerId: 1, layout: 'js-safe' as const, publicIds: { keys: [KEY], checkBits: 32 } }),
    }),
  ],
  controllers: [ItemsController],
})
class AppModule {}

describe('ParseSnowflakeIdPipe with a form, in a booted app', () => {
  let app: INestApplication;
  let server: Server;
  let ids: IdService;
  let id: bigint;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    server = app.getHttpServer() as Server;
    ids = app.get(IdService);
    id = ids.next();
  });
  afterAll(() => app.close());

  it('reads an ID in the base32 form with its prefix, in either case', async () => {
    const text = users.format(id);
    await request(server)
      .get(`/users/${text}`)
      .expect(200, { id: String(id) });
    await request(server)
      .get(`/users/${text.replace(/[a-z]/g, (c, i: number) => (i > 4 ? c.toUpperCase() : c))}`)
      .expect(200, { id: String(id) });
    await request(server)
      .get(`/optional?after=${text}`)
      .expect(200, { after: String(id) });
    await request(server).get('/optional').expect(200, { after: 'absent' });
    await request(server)
      .get(`/decorated/${text}`)
      .expect(200, { id: String(id) });
    await request(server)
      .get(`/decorated/${String(id)}`)
      .expect(400);
  });

  it('answers 400 naming the parameter, the position and the character of a malformed text', async () => {
    const text = users.format(id);
    const bad = `${text.slice(0, 8)}u${text.slice(9)}`;
    const response = await request(server).get(`/users/${bad}`).expect(400);
    expect(response.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: expect.stringContaining('id: Invalid snowflake ID') as string,
      type: 'InvalidSnowflakeTextError',
    });
    expect(response.body.message).toContain('"u" at position 8 is not a Crockford base32 digit');
    const decimal = await request(server)
      .get(`/users/${String(id)}`)
      .expect(400);
    expect(decimal.body.message).toContain('expected the prefix "user_"');
  });

  it("checks the layout after the form: a valid base62 text of an ID wider than the app's layout is refused", async () => {
    await request(server)
      .get(`/wide/${base62Form().format(id)}`)
      .expect(200, { id: String(id) });
    const response = await request(server)
      .get(`/wide/${base62Form().format(1n << 60n)}`)
      .expect(400);
    expect(response.body.message).toMatch(/wider than the layout's 53 bits/);
  });

  it('reads public IDs with the keys of the module, and refuses altered ones with InvalidPublicIdError', async () => {
    const text = ids.toPublicId(id);
    await request(server)
      .get(`/public/${text}`)
      .expect(200, { id: String(id) });
    const altered = `${text.slice(0, -1)}${text.endsWith('0') ? '1' : '0'}`;
    const response = await request(server).get(`/public/${altered}`).expect(400);
    expect(response.body).toMatchObject({
      type: 'InvalidPublicIdError',
      message: expect.stringContaining('not a public ID'),
    });
    await request(server)
      .get(`/public/${String(id)}`)
      .expect(400);
  });

  it('refuses a raw ID sent as a JSON number, which would skip the form, with 400 as for its string', async () => {
    const small = ids.next();
    const asNumber = await request(server)
      .post('/public')
      .send({ id: Number(small) })
      .expect(400);
    expect(asNumber.body).toMatchObject({ type: 'InvalidSnowflakeError' });
    expect(asNumber.body.message).toContain('expected the public text of an ID, got number');
    await request(server)
      .post('/public')
      .send({ id: String(small) })
      .expect(400);
    await request(server)
      .post('/public')
      .send({ id: ids.toPublicId(small) })
      .expect(201, { id: String(small) });
    const pipe = new ParseSnowflakeIdPipe({ form: users });
    for (const value of [Number(small), small, [users.format(small)], { toString: () => users.format(small) }]) {
      expect(() => pipe.transform(value, { type: 'body' })).toThrow(expect.objectContaining({ status: 400 }) as Error);
    }
  });

  it('answers a huge array with a short message', async () => {
    const response = await request(server)
      .post('/public')
      .send({ id: Array.from({ length: 20_000 }, () => 1) })
      .expect(400);
    expect(response.body.message.length).toBeLessThan(300);
  });
});
