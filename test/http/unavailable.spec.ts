/**
 * What an HTTP client sees when no ID can be issued, on both of Nest's HTTP adapters, served for real on a port:
 * 503 in an app that registered nothing (the library's transient errors carry the http-errors shape Nest's default
 * handler reads), and 503 with `Retry-After` where SnowflakeExceptionFilter is registered. The worker-ID source here
 * never becomes ready, so that the wait runs out exactly; the outage suite proves the same against a real Redis.
 */
import 'reflect-metadata';
import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import {
  IdService,
  LeaseExhaustedError,
  RedisUnavailableError,
  SnowflakeExceptionFilter,
  SnowflakeModule,
  WorkerUnavailableError,
} from '../../lib/index.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';

/**
 * The module's bound: far above the 50 ms a call of its own asks for (`/ids/quick`), so that a loaded machine's slow
 * request cannot be mistaken for the module's bound.
 */
const BOUND_MS = 1500;

/** A source that hands out a worker ID whose permit always refuses, and is never ready again: a fenced lease. */
function fencedSource(workerId: number): StubWorkerSource {
  return new StubWorkerSource({
    kind: 'fenced-for-tests',
    workerId,
    refusal: () => new WorkerUnavailableError('fenced', 'renewals failing'),
    whenReady: 'until-aborted',
  });
}

@Controller('ids')
class IdsController {
  constructor(private readonly ids: IdService) {}

  @Get('next')
  async next() {
    return { id: String(await this.ids.nextAsync()) };
  }

  @Get('quick')
  async quick() {
    return { id: String(await this.ids.nextAsync({ timeoutMs: 50 })) };
  }

  @Get('settling')
  settling() {
    throw new WorkerUnavailableError('settling', 'namespace "orders", 7300 ms left', 7300);
  }

  @Get('redis')
  redis() {
    throw new RedisUnavailableError('orders', 3, 'connect ECONNREFUSED 10.1.2.3:6379');
  }

  @Get('leases')
  leases() {
    throw new LeaseExhaustedError('orders', 1024, 1024);
  }
}

type AdapterName = 'express' | 'fastify';
let workerIds = 100;

async function serve(adapter: AdapterName, filter: boolean): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [SnowflakeModule.forRoot({ workerSource: fencedSource(workerIds++), maxAsyncWaitMs: BOUND_MS })],
    controllers: [IdsController],
    providers: filter ? [{ provide: APP_FILTER, useClass: SnowflakeExceptionFilter }] : [],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app =
    adapter === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

async function get(url: string): Promise<{ status: number; retryAfter: string | null; body: unknown; ms: number }> {
  const started = performance.now();
  const response = await fetch(url);
  const body: unknown = await response.json();
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body,
    ms: performance.now() - started,
  };
}

describe.each(['express', 'fastify'] as const)('no ID to issue, over HTTP on %s', (adapter) => {
  describe('with no filter registered', () => {
    let app: INestApplication;
    let url: string;
    beforeAll(async () => ({ app, url } = await serve(adapter, false)));
    afterAll(() => app.close());

    it('answers 503, not 500, once maxAsyncWaitMs has passed, without the error message', async () => {
      const { status, body, retryAfter, ms } = await get(`${url}/ids/next`);
      expect(status).toBe(503);
      expect(body).toEqual({ statusCode: 503, message: 'Service Unavailable' });
      expect(retryAfter).toBeNull();
      expect(ms).toBeGreaterThanOrEqual(BOUND_MS - 5);
      expect(ms).toBeLessThan(BOUND_MS + 1000);
    });

    it("honours a call's own timeoutMs", async () => {
      const { status, ms } = await get(`${url}/ids/quick`);
      expect(status).toBe(503);
      expect(ms).toBeLessThan(BOUND_MS);
    });

    it.each(['settling', 'redis', 'leases'])('answers 503 for the transient error of %s', async (kind) => {
      const { status, body } = await get(`${url}/ids/${kind}`);
      expect(status).toBe(503);
      expect(JSON.stringify(body)).not.toContain('10.1.2.3');
    });
  });

  describe('with SnowflakeExceptionFilter registered', () => {
    let app: INestApplication;
    let url: string;
    beforeAll(async () => ({ app, url } = await serve(adapter, true)));
    afterAll(() => app.close());

    it('answers 503 with Retry-After once the wait runs out', async () => {
      const { status, body, retryAfter, ms } = await get(`${url}/ids/next`);
      expect(status).toBe(503);
      expect(retryAfter).toBe('1');
      expect(body).toEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        type: 'WorkerWaitTimeoutError',
        message: 'No ID can be issued right now; retry in 1 s.',
      });
      expect(ms).toBeLessThan(BOUND_MS + 1000);
    });

    it('puts what is left of a settling namespace in Retry-After, rounded up to whole seconds', async () => {
      const { status, retryAfter, body } = await get(`${url}/ids/settling`);
      expect(status).toBe(503);
      expect(retryAfter).toBe('8');
      expect(body).toMatchObject({ message: 'No ID can be issued right now; retry in 8 s.' });
    });

    it.each(['redis', 'leases'])('answers 503 with Retry-After for %s', async (kind) => {
      const { status, retryAfter } = await get(`${url}/ids/${kind}`);
      expect(status).toBe(503);
      expect(retryAfter).toBe('1');
    });
  });
});
