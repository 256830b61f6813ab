import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IdService } from 'nestjs-snowflake';
import { AppModule } from './app.module.js';
import { LocalRedis } from './config/local-redis.js';
import { SAMPLE_CONFIG } from './config/sample-config.module.js';
import type { SampleConfig } from './config/sample.config.js';
import { setUpOpenApi } from './openapi.js';

/** The lease TTL with a redis-server of this run: a fresh namespace settles for one TTL before the first claim. */
const LOCAL_LEASE_TTL_MS = 2000;

async function bootstrap(): Promise<void> {
  const logger = new Logger('Sample');
  // Importing AppModule has loaded .env into process.env already (ConfigModule.forRoot()), so REDIS_URL there counts.
  if (!process.env.REDIS_URL) await useLocalRedis(logger);

  const app = await NestFactory.create(AppModule);
  // SIGTERM / SIGINT run the shutdown hooks: the worker ID is released with its last timestamp, so the next
  // instance can take it at once instead of waiting for the lease to expire. Then process.exit(), rather than the
  // signal raised again, so that 'exit' handlers run: the one that stops the redis-server of this run.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  setUpOpenApi(app);
  const config = app.get<SampleConfig>(SAMPLE_CONFIG);
  await app.listen(config.port);
  const ids = app.get(IdService);
  const database = config.database.kind === 'sqlite' ? `SQLite ${config.database.file}` : 'PostgreSQL';
  const namespace = ids.status().lease?.namespace;
  logger.log(
    `Listening on ${await app.getUrl()} as worker ${ids.workerId} (namespace "${namespace}", ${database}), ` +
      `${process.uptime().toFixed(1)} s after start. Try GET /ids/next, POST /users, GET /health.`,
  );
}

/**
 * Starts a redis-server for this run and points the app at it through the environment it reads, with a short lease
 * TTL: the namespace is new in a new server, so the first claim waits one TTL (settling) before the app serves.
 */
async function useLocalRedis(logger: Logger): Promise<void> {
  const redis = await LocalRedis.start();
  // Whatever ends the process (a signal after the shutdown hooks, a failed bootstrap, process.exit) stops the server.
  process.once('exit', () => redis.stop());
  process.env.REDIS_URL = redis.url;
  process.env.SNOWFLAKE_LEASE_TTL_MS ||= String(LOCAL_LEASE_TTL_MS);
  logger.log(
    `Started redis-server on 127.0.0.1:${redis.port} (pid ${redis.pid}) for this run, lease TTL ` +
      `${process.env.SNOWFLAKE_LEASE_TTL_MS} ms; set REDIS_URL to use your own.`,
  );
}

await bootstrap();
