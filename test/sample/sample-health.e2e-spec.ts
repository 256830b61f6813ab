import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { IdService } from 'nestjs-snowflake';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { http, startSampleApp, tempDirectory } from './sample-app.harness.js';

const TTL_MS = 1500;

interface Indicator {
  status: 'up' | 'down';
  [detail: string]: unknown;
}
interface HealthBody {
  status: 'ok' | 'error';
  details: Record<string, Indicator>;
}

/** GETs /health until `accept` holds, or fails with the last answer. */
async function pollHealth(
  app: INestApplication,
  accept: (status: number, body: HealthBody) => boolean,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  let last: { status: number; body: HealthBody } | undefined;
  while (Date.now() < deadline) {
    const response = await http(app).get('/health');
    last = { status: response.status, body: response.body as HealthBody };
    if (accept(last.status, last.body)) return last.body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`/health did not reach the expected state within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

describe('sample app /health while its Redis goes away and comes back', () => {
  const dir = tempDirectory();
  let redis: RedisServer;
  let app: INestApplication;

  beforeAll(async () => {
    redis = await RedisServer.start();
    // The second test's Redis comes back empty, and its settling is real; the first claim is not about settling.
    await settledNamespace(redis.url, 'sample-health');
    app = await startSampleApp(
      {
        REDIS_URL: redis.url,
        DATABASE_URL: `file:${dir.path('sample.sqlite')}`,
        SNOWFLAKE_NAMESPACE: 'sample-health',
        SNOWFLAKE_LEASE_TTL_MS: String(TTL_MS),
      },
      // The failed health checks this test causes on purpose would fill the output.
      { logger: false },
    );
  });

  afterAll(async () => {
    await app?.close();
    await redis?.dispose();
    dir.remove();
  });

  it('is up with the lease and the database', async () => {
    const response = await http(app).get('/health').expect(200);
    const body = response.body as HealthBody;
    expect(body.status).toBe('ok');
    expect(body.details.snowflake).toMatchObject({
      status: 'up',
      source: 'redis',
      namespace: 'sample-health',
      leaseState: 'held',
      workerId: app.get(IdService).workerId,
    });
    expect(body.details.database).toMatchObject({ status: 'up' });
  });

  it('is down when Redis is stopped, refuses IDs once the lease fences, and is up again after Redis returns', async () => {
    await redis.stop();

    const down = await pollHealth(app, (status) => status === 503, 2 * TTL_MS);
    expect(down.status).toBe('error');
    expect(down.details.snowflake).toMatchObject({ status: 'down' });
    expect(down.details.database).toMatchObject({ status: 'up' });

    await pollHealth(app, (_, body) => body.details.snowflake?.leaseState === 'fenced', 2 * TTL_MS);
    // At once, not after waiting for the lease: 503 with the typed error and a hint when to retry.
    const started = Date.now();
    const refused = await http(app).get('/ids/next').expect(503);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({
      statusCode: 503,
      error: 'Service Unavailable',
      type: 'WorkerUnavailableError',
    });
    // The @GeneratedId() subscriber waits for the lease up to maxAsyncWaitMs (5 s), then the insert fails with 503
    // rather than a bad ID.
    const insertStarted = Date.now();
    const insert = await http(app).post('/users').send({ email: 'late@example.com', name: 'Late' }).expect(503);
    expect(Date.now() - insertStarted).toBeLessThan(5000 + 1000);
    expect(insert.body).toMatchObject({ type: 'WorkerWaitTimeoutError' });

    await redis.restart();
    // Down longer than the TTL, Redis comes back empty: the namespace settles (12 s) before the lease is held again.
    const up = await pollHealth(app, (status) => status === 200, SETTLE_AFTER_LOSS_MS + 4 * TTL_MS + 3000);
    expect(up.details.snowflake).toMatchObject({ status: 'up', leaseState: 'held', renewalFailures: 0 });

    const next = (await http(app).get('/ids/next').expect(200)).body as { workerId: number };
    expect(next.workerId).toBe(up.details.snowflake.workerId);
    await http(app).post('/users').send({ email: 'back@example.com', name: 'Back' }).expect(201);
  });
});
