import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { SnowflakeHealthIndicator } from 'nestjs-snowflake/health';
import { AppModule } from './app.module.js';
import { databasePart } from './database.js';
import { loadEntries } from './entries.js';
import { PostIds } from './post-ids.service.js';
import { PostQueryDto } from './post-query.dto.js';

/** Boots against REDIS_URL, issues an ID, saves and reads back a row when DATABASE_URL is set, prints one JSON line. */
async function main(): Promise<void> {
  const entries = await loadEntries();
  const app = await NestFactory.createApplicationContext(await AppModule.register(), { logger: ['error', 'warn'] });
  const ids = app.get(PostIds);
  const id = ids.next();
  const row = (await (await databasePart())?.saveAndReadBack(app)) ?? null;
  const health = await app.get(SnowflakeHealthIndicator).isHealthy();
  await app.close();
  console.log(
    JSON.stringify({ entries, dto: PostQueryDto.name, id: id.toString(), issuedAt: ids.issuedAt(id), row, health }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
