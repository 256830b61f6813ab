/**
 * ParseSnowflakeIdPipe with `generator`: IDs parsed in the layout of a named registration, beside the default one's.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import { getIdServiceToken, IdService, ParseSnowflakeIdPipe, SnowflakeModule } from '../../lib/index.js';

@Controller()
class ItemsController {
  @Get('orders/:id')
  order(@Param('id', new ParseSnowflakeIdPipe({ generator: 'orders' })) id: bigint) {
    return { id: String(id) };
  }

  @Get('items/:id')
  item(@Param('id', new ParseSnowflakeIdPipe()) id: bigint) {
    return { id: String(id) };
  }

  @Get('invoices/:id')
  invoice(@Param('id', new ParseSnowflakeIdPipe({ generator: 'invoices' })) id: bigint) {
    return { id: String(id) };
  }
}

/** The default generator is 63 bits wide; the orders one fits a JS number (js-safe, 53 bits). */
@Module({
  imports: [
    SnowflakeModule.forRoot({ workerId: 1 }),
    SnowflakeModule.forRoot({ name: 'orders', workerId: 2, layout: 'js-safe' }),
  ],
  controllers: [ItemsController],
})
class AppModule {}

describe('ParseSnowflakeIdPipe({ generator })', () => {
  let app: INestApplication;
  let server: Server;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    server = app.getHttpServer() as Server;
  });
  afterAll(() => app.close());

  it("parses in the named registration's layout, and the default pipe in the default one's", async () => {
    const order = app.get<IdService>(getIdServiceToken('orders')).nextString();
    const item = app.get(IdService).nextString();
    await request(server).get(`/orders/${order}`).expect(200, { id: order });
    await request(server).get(`/items/${item}`).expect(200, { id: item });
    await request(server).get(`/items/${order}`).expect(200, { id: order });

    // A 63-bit ID of the default layout is too wide for the orders layout.
    const response = await request(server).get(`/orders/${item}`).expect(400);
    expect(response.body).toMatchObject({ type: 'InvalidSnowflakeError', message: expect.stringMatching(/^id: /) });
  });

  it('fails, naming the registrations that run, for a name no app in the process registers', async () => {
    const response = await request(server).get('/invoices/1').expect(500);
    expect(response.body).toMatchObject({ statusCode: 500 });
    expect(() => IdService.current('invoices')).toThrow(/no IdService named "invoices".*"default", "orders"/);
  });
});
