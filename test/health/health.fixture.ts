import { Controller, Get, Module, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import type { Server } from 'node:http';
import request from 'supertest';
import { SnowflakeHealthIndicator, SnowflakeHealthModule } from '../../lib/health.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly snowflake: SnowflakeHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.snowflake.isHealthy()]);
  }
}

/** GET /health through terminus's HealthCheckService, as an app would wire it. */
@Module({ imports: [TerminusModule, SnowflakeHealthModule], controllers: [HealthController] })
export class HealthModule {}

/** One indicator's entry in a terminus health result. */
export interface IndicatorDetails {
  status: 'up' | 'down';
  reason?: string;
  message?: string;
  [detail: string]: unknown;
}

/** The body terminus answers on GET /health. */
export interface HealthBody {
  status: 'ok' | 'error';
  info?: Record<string, IndicatorDetails>;
  error?: Record<string, IndicatorDetails>;
}

/** GET `path` and return the HTTP status and the health body. */
export async function getHealth(
  app: INestApplication,
  path = '/health',
): Promise<{ status: number; body: HealthBody }> {
  const response = await request(app.getHttpServer() as Server).get(path);
  return { status: response.status, body: response.body as HealthBody };
}

/** The snowflake indicator's entry, wherever terminus put it (info when up, error when down). */
export function snowflakeOf(body: HealthBody, key = 'snowflake'): IndicatorDetails {
  const details = body.info?.[key] ?? body.error?.[key];
  if (details === undefined) throw new Error(`no "${key}" in ${JSON.stringify(body)}`);
  return details;
}

/** GETs /health until `accept` holds, or fails with the last answer after `timeoutMs`. */
export async function pollHealth(
  app: INestApplication,
  accept: (status: number, details: IndicatorDetails) => boolean,
  timeoutMs: number,
  path = '/health',
): Promise<IndicatorDetails> {
  const deadline = Date.now() + timeoutMs;
  let last: { status: number; body: HealthBody } | undefined;
  while (Date.now() < deadline) {
    last = await getHealth(app, path);
    const details = snowflakeOf(last.body);
    if (accept(last.status, details)) return details;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${path} did not reach the expected state within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}
