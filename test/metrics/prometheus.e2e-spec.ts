/**
 * The README's Prometheus example, booted: the OpenTelemetry Prometheus exporter as the global meter provider's
 * reader, SnowflakeMetricsModule beside SnowflakeModule on a real redis-server, and one scrape of `/metrics` over
 * HTTP that names every instrument (in Prometheus's spelling: dots become underscores, counters end in `_total`).
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import request from 'supertest';
import { SnowflakeMetricsModule } from '../../lib/metrics.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { freePort } from '../support/redis-server.js';
import { settledSharedNamespace } from '../support/shared-redis.js';
import { sleep } from '../support/time.js';

const TTL_MS = 1500;

describe('the README example: metrics scraped by Prometheus over HTTP', () => {
  let exporter: PrometheusExporter;
  let provider: MeterProvider;
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    const { url, namespace } = await settledSharedNamespace('metrics-prometheus');
    port = await freePort();
    // As in the README, except the port (a free one) and the start, awaited here so that the scrape cannot race it.
    exporter = new PrometheusExporter({ port, preventServerStart: true });
    await exporter.startServer();
    provider = new MeterProvider({ readers: [exporter] });
    expect(metrics.setGlobalMeterProvider(provider)).toBe(true);

    @Module({
      imports: [
        SnowflakeModule.forRoot({ redis: { url, namespace, ttlMs: TTL_MS } }),
        SnowflakeMetricsModule.forRoot(),
      ],
    })
    class AppModule {}

    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await provider?.shutdown();
    metrics.disable();
  });

  it('serves every instrument in the text format at /metrics', async () => {
    app.get(IdService).nextBatch(3);
    // The renewal histogram appears once the lease has renewed (every ttl / 4): scrape until it has.
    const scrape = () => request(`http://127.0.0.1:${port}`).get('/metrics');
    let response = await scrape();
    for (let i = 0; i < 100 && !response.text.includes('snowflake_lease_renewal_duration_count'); i++) {
      await sleep(100);
      response = await scrape();
    }
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.text;

    expect(text).toMatch(/^snowflake_ids_issued_total\{[^}]*\} 3$/m);
    expect(text).toMatch(/^snowflake_lease_state\{[^}]*snowflake_lease_state="held"[^}]*\} 1$/m);
    expect(text).toMatch(/^snowflake_lease_state\{[^}]*snowflake_lease_state="fenced"[^}]*\} 0$/m);
    expect(text).toMatch(/^snowflake_ready\{[^}]*\} 1$/m);
    expect(text).toMatch(/^snowflake_lease_renewal_duration_bucket\{[^}]*le="0\.5"[^}]*\} [1-9]\d*$/m);
    const families = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => `${name} ${type}`);
    expect(families).toEqual(
      expect.arrayContaining([
        'snowflake_ids_issued_total counter',
        'snowflake_sequence_overflow_waits_total counter',
        'snowflake_clock_back_events_total counter',
        'snowflake_ready gauge',
        'snowflake_worker_switches_total counter',
        'snowflake_lease_state gauge',
        'snowflake_lease_fence_headroom gauge',
        'snowflake_lease_clock_offset gauge',
        'snowflake_lease_renewal_consecutive_failures gauge',
        'snowflake_lease_renewal_age gauge',
        'snowflake_lease_renewal_duration histogram',
      ]),
    );
  });
});
