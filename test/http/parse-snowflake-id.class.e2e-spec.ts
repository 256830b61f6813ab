/**
 * The class form of the ID pipe (`@Param('id', ParseSnowflakeIdPipe)`) gets the IdService of its module from Nest, so
 * it parses in its own app's layout even while an app of another layout runs in the same process, where no
 * process-wide lookup could choose.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import { IdService, ParseSnowflakeIdPipe, SnowflakeModule } from '../../lib/index.js';

@Controller('items')
class ItemsController {
  @Get(':id')
  find(@Param('id', ParseSnowflakeIdPipe) id: bigint) {
    return { id: String(id) };
  }
}

async function boot(layout: 'js-safe' | 'default', workerId: number): Promise<INestApplication> {
  @Module({ imports: [SnowflakeModule.forRoot({ workerId, layout })], controllers: [ItemsController] })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('ParseSnowflakeIdPipe as a class, beside an app of another layout', () => {
  let jsSafe: INestApplication;
  let wide: INestApplication;

  beforeAll(async () => {
    jsSafe = await boot('js-safe', 1);
    wide = await boot('default', 2);
  });
  afterAll(async () => {
    await jsSafe?.close();
    await wide?.close();
  });

  it("parses in each app's own layout", async () => {
    expect(() => IdService.current()).toThrow(/several IdServices with different layouts/);
    const wideId = wide.get(IdService).nextString();
    expect(BigInt(wideId)).toBeGreaterThan(2n ** 53n);
    await request(wide.getHttpServer() as Server)
      .get(`/items/${wideId}`)
      .expect(200, { id: wideId });
    const refused = await request(jsSafe.getHttpServer() as Server)
      .get(`/items/${wideId}`)
      .expect(400);
    expect(refused.body.message).toMatch(/^id: .*wider than the layout's 53 bits/);
    const narrowId = jsSafe.get(IdService).nextString();
    await request(jsSafe.getHttpServer() as Server)
      .get(`/items/${narrowId}`)
      .expect(200, { id: narrowId });
  });
});
