import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { SnowflakeHealthIndicator } from 'nestjs-snowflake/health';
import { IdService } from 'nestjs-snowflake';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { loadEntries } from './entries';
import { PostIds } from './post-ids.service';
import { PostQueryDto } from './post-query.dto';
import { Post } from './post.entity';
import { redis } from './redis.client';
import { createAndReadThing } from './things.prisma';

/** Boots against REDIS_URL and DATABASE_URL, issues an ID, saves and reads back a row, prints one JSON line. */
async function main(): Promise<void> {
  const entries = loadEntries();
  const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
  const ids = app.get(PostIds);
  const id = ids.next();
  const posts = app.get(DataSource).getRepository(Post);
  const saved = await posts.save(posts.create({ title: 'hello' }));
  const readBack = await posts.findOneByOrFail({ id: saved.id });
  const prisma = await createAndReadThing(app.get(IdService));
  const health = await app.get(SnowflakeHealthIndicator).isHealthy();
  await app.close();
  await redis.quit();
  const row = { saved: saved.id, readBack: readBack.id };
  console.log(
    JSON.stringify({
      entries,
      dto: PostQueryDto.name,
      id: id.toString(),
      issuedAt: ids.issuedAt(id),
      row,
      prisma,
      health,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
