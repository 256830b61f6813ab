import 'reflect-metadata';
import {
  ConflictException,
  Controller,
  Get,
  HttpStatus,
  Module,
  Param,
  Query,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import { IdService, ParseSnowflakeIdPipe, SnowflakeModule } from '../../lib/index.js';

@Controller()
class ItemsController {
  @Get('class/:id')
  byClass(@Param('id', ParseSnowflakeIdPipe) id: bigint) {
    return { id: String(id) };
  }

  @Get('optional')
  optional(@Query('after', new ParseSnowflakeIdPipe({ optional: true })) after?: bigint) {
    return { after: after === undefined ? 'absent' : String(after) };
  }

  @Get('status/:id')
  status(@Param('id', new ParseSnowflakeIdPipe({ errorHttpStatusCode: HttpStatus.NOT_ACCEPTABLE })) id: bigint) {
    return { id: String(id) };
  }

  @Get('factory/:id')
  factory(
    @Param('id', new ParseSnowflakeIdPipe({ exceptionFactory: (error) => new ConflictException(`custom: ${error}`) }))
    id: bigint,
  ) {
    return { id: String(id) };
  }
}

// Not global: the class form gets IdService from this module, the instances from the running service.
@Module({ imports: [SnowflakeModule.forRoot({ workerId: 1, layout: 'js-safe' })], controllers: [ItemsController] })
class AppModule {}

describe('ParseSnowflakeIdPipe and its options', () => {
  let app: INestApplication;
  let server: Server;
  let valid: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    server = app.getHttpServer() as Server;
    valid = app.get(IdService).nextString();
  });
  afterAll(() => app.close());

  it('parses a valid ID as a class, in a module that is not global', async () => {
    await request(server).get(`/class/${valid}`).expect(200, { id: valid });
  });

  it('answers 400 in Nest’s shape, naming the parameter, the reason and the error class', async () => {
    const response = await request(server).get('/class/12ab').expect(400);
    expect(response.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: expect.stringMatching(/^id: Invalid snowflake ID "12ab"/),
      type: 'InvalidSnowflakeError',
    });
  });

  it('lets an absent optional value through, and still parses a present one', async () => {
    await request(server).get('/optional').expect(200, { after: 'absent' });
    await request(server).get(`/optional?after=${valid}`).expect(200, { after: valid });
    await request(server).get('/optional?after=-1').expect(400);
  });

  it('answers with the status it is given', async () => {
    const response = await request(server).get('/status/x').expect(406);
    expect(response.body).toMatchObject({ statusCode: 406, error: 'Not Acceptable', type: 'InvalidSnowflakeError' });
  });

  it('throws what the exception factory builds', async () => {
    const response = await request(server).get('/factory/x').expect(409);
    expect(response.body.message).toMatch(/^custom: id: Invalid snowflake ID "x"/);
  });

  it('refuses an ID wider than the layout (js-safe: 53 bits)', async () => {
    const response = await request(server)
      .get(`/class/${2n ** 60n}`)
      .expect(400);
    expect(response.body.message).toMatch(/^id: /);
  });
});
