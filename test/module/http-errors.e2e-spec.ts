import 'reflect-metadata';
import { Controller, Get, Module, Param, Query, Res, type INestApplication, type LoggerService } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import request from 'supertest';
import {
  BatchTooLargeError,
  ClockMovedBackError,
  SequenceExhaustedError,
  WorkerUnavailableError,
} from '../../lib/core/errors.js';
import { ParseSnowflakeIdPipe } from '../../lib/http/parse-snowflake-id.pipe.js';
import { SnowflakeExceptionFilter } from '../../lib/http/snowflake-exception.filter.js';
import { LeaseExhaustedError, RedisUnavailableError } from '../../lib/lease/lease.errors.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';

/** The part of Express's response the streaming route uses. */
interface StreamingResponse {
  status(code: number): { write(chunk: string): void };
}

/** What the handlers received, to prove a malformed ID never reaches one. */
const received: unknown[] = [];

@Controller('items')
class ItemsController {
  constructor(private readonly ids: IdService) {}

  @Get('by-query')
  byQuery(@Query('after', ParseSnowflakeIdPipe) after: bigint) {
    received.push(after);
    return { after: typeof after, workerId: this.ids.decode(after).workerId };
  }

  @Get('throws/:kind')
  throws(@Param('kind') kind: string) {
    switch (kind) {
      case 'invalid':
        return this.ids.decode('12ab');
      case 'fenced':
        throw new WorkerUnavailableError('fenced', 'The lease lapsed; re-claiming.');
      case 'exhausted':
        throw new SequenceExhaustedError(3, 10);
      case 'redis':
        throw new RedisUnavailableError('default', 5, 'connect ECONNREFUSED 10.1.2.3:6379');
      case 'clock':
        throw new ClockMovedBackError(5000, 1000);
      case 'leases':
        throw new LeaseExhaustedError('orders', 1024, 1024);
      default:
        throw new BatchTooLargeError(1_000_000, 40_960, 10);
    }
  }

  /** Starts the response itself, then fails: the filter must not try to set headers any more. */
  @Get('streaming')
  streaming(@Res() response: StreamingResponse) {
    response.status(200).write('partial');
    throw new WorkerUnavailableError('fenced', 'The lease lapsed; re-claiming.');
  }

  @Get(':id')
  one(@Param('id', ParseSnowflakeIdPipe) id: bigint) {
    received.push(id);
    return { workerId: this.ids.decode(id).workerId, type: typeof id };
  }
}

async function createApp(
  register: 'provider' | 'global',
  errors: string[],
  warnings: string[],
): Promise<INestApplication> {
  const logger: LoggerService = {
    log() {},
    warn: (message: unknown) => void warnings.push(String(message)),
    debug() {},
    verbose() {},
    error: (message: unknown) => void errors.push(message instanceof Error ? message.message : String(message)),
  };
  @Module({
    imports: [SnowflakeModule.forRoot({ workerId: 5 })],
    controllers: [ItemsController],
    providers: register === 'provider' ? [{ provide: APP_FILTER, useClass: SnowflakeExceptionFilter }] : [],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(logger)
    .compile();
  const app = moduleRef.createNestApplication({ logger });
  if (register === 'global') app.useGlobalFilters(new SnowflakeExceptionFilter(app.getHttpAdapter()));
  await app.init();
  return app;
}

describe('ParseSnowflakeIdPipe', () => {
  let app: INestApplication;
  let server: Server;

  beforeAll(async () => {
    // No filter: the pipe's 400 stands on its own.
    @Module({ imports: [SnowflakeModule.forRoot({ workerId: 5 })], controllers: [ItemsController] })
    class BareModule {}
    const moduleRef = await Test.createTestingModule({ imports: [BareModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    server = app.getHttpServer() as Server;
  });
  afterAll(() => app.close());

  it('hands the handler a bigint of the layout', async () => {
    const id = app.get(IdService).next();
    const response = await request(server).get(`/items/${id}`).expect(200);
    expect(response.body).toEqual({ workerId: 5, type: 'bigint' });
    expect(received.at(-1)).toBe(id);
  });

  it.each([
    ['not digits', '12ab', /digits only/],
    ['negative', '-1', /digits only/],
    ['a fraction', '1.5', /digits only/],
    ['wider than 63 bits', '99999999999999999999999999', /wider than the layout/],
  ])('answers 400 naming the parameter for %s, and the handler never runs', async (_name, bad, reason) => {
    const before = received.length;
    const response = await request(server)
      .get(`/items/${encodeURIComponent(bad)}`)
      .expect(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request', type: 'InvalidSnowflakeError' });
    const message = (response.body as { message: string }).message;
    expect(message).toMatch(/^id: Invalid snowflake ID/);
    expect(message).toMatch(reason);
    expect(received.length).toBe(before);
  });

  it('parses query values too, and a missing one is a 400 rather than undefined', async () => {
    const id = app.get(IdService).next();
    await request(server)
      .get('/items/by-query')
      .query({ after: id.toString() })
      .expect(200, { after: 'bigint', workerId: 5 });
    const missing = await request(server).get('/items/by-query').expect(400);
    expect((missing.body as { message: string }).message).toMatch(/^after: Invalid snowflake ID/);
  });
});

describe.each(['provider', 'global'] as const)('SnowflakeExceptionFilter registered as %s', (register) => {
  let app: INestApplication;
  let server: Server;
  const errors: string[] = [];
  const warnings: string[] = [];

  beforeAll(async () => {
    app = await createApp(register, errors, warnings);
    server = app.getHttpServer() as Server;
  });
  afterAll(() => app.close());

  it('answers an InvalidSnowflakeError thrown in a handler with 400 and its message', async () => {
    const response = await request(server).get('/items/throws/invalid').expect(400);
    expect(response.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      type: 'InvalidSnowflakeError',
      message: expect.stringMatching(/^Invalid snowflake ID "12ab"/),
    });
    expect(response.headers['retry-after']).toBeUndefined();
  });

  it.each([
    ['fenced', 'WorkerUnavailableError'],
    ['exhausted', 'SequenceExhaustedError'],
    ['redis', 'RedisUnavailableError'],
    ['clock', 'ClockMovedBackError'],
    ['leases', 'LeaseExhaustedError'],
  ])('answers a temporary outage (%s) with 503 and Retry-After, its details in the log only', async (kind, name) => {
    warnings.length = 0;
    const response = await request(server).get(`/items/throws/${kind}`).expect(503);
    expect(response.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      type: name,
      message: 'No ID can be issued right now; retry in 1 s.',
    });
    expect(response.headers['retry-after']).toBe('1');
    expect(warnings).toEqual([expect.stringContaining(`Answered 503: ${name}: `)]);
  });

  it('keeps Redis addresses and option names out of the 503 body, and logs a kind of outage once', async () => {
    warnings.length = 0;
    const response = await request(server).get('/items/throws/redis').expect(503);
    expect(response.text).not.toContain('10.1.2.3');
    // The RedisUnavailableError case above logged this kind with its address; a second 503 of it adds no line.
    expect(warnings).toEqual([]);
  });

  it('ends a response the handler already started instead of failing on its headers', async () => {
    errors.length = 0;
    const response = await request(server).get('/items/streaming');
    expect(response.status).toBe(200);
    expect(response.text).toBe('partial');
    expect(response.headers['retry-after']).toBeUndefined();
    expect(errors.join('\n')).not.toMatch(/ERR_HTTP_HEADERS_SENT|Cannot set headers/);
  });

  it('leaves any other SnowflakeError to Nest: 500, logged, its details kept from the client', async () => {
    errors.length = 0;
    const response = await request(server).get('/items/throws/other').expect(500);
    expect(response.body).toEqual({ statusCode: 500, message: 'Internal server error' });
    expect(response.text).not.toContain('nextBatch');
    expect(errors.join('\n')).toMatch(/nextBatch\(1000000\)/);
  });

  it('is not needed for the pipe, whose 400 passes through unchanged', async () => {
    const response = await request(server).get('/items/abc').expect(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request', type: 'InvalidSnowflakeError' });
    expect((response.body as { message: string }).message).toMatch(/^id: /);
  });
});
