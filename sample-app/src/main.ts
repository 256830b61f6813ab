import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { IdService } from 'nestjs-snowflake';
import { AppModule } from './app.module.js';
import { SAMPLE_CONFIG } from './config/sample-config.module.js';
import type { SampleConfig } from './config/sample.config.js';
import { setUpOpenApi } from './openapi.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // SIGTERM / SIGINT run the shutdown hooks: the worker ID is released with its last timestamp, so the next
  // instance can take it at once instead of waiting for the lease to expire.
  app.enableShutdownHooks();
  setUpOpenApi(app);
  const config = app.get<SampleConfig>(SAMPLE_CONFIG);
  await app.listen(config.port);
  const ids = app.get(IdService);
  const database = config.database.kind === 'sqlite' ? `SQLite ${config.database.file}` : 'PostgreSQL';
  const namespace = ids.status().lease?.namespace;
  new Logger('Sample').log(
    `Listening on ${await app.getUrl()} as worker ${ids.workerId} (namespace "${namespace}", ${database}). ` +
      'Try GET /ids/next, POST /users, GET /health.',
  );
}

await bootstrap();
