import { Module, type INestApplicationContext } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SnowflakeTypeOrmModule } from 'nestjs-snowflake/typeorm';
import { DataSource } from 'typeorm';
import { Post } from './post.entity.js';

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      schema: process.env.DATABASE_SCHEMA,
      entities: [Post],
      synchronize: true,
    }),
    SnowflakeTypeOrmModule,
  ],
})
export class DatabaseModule {}

/** Saves a post without an ID and reads it back by the ID the subscriber gave it. */
export async function saveAndReadBack(app: INestApplicationContext): Promise<{ saved: string; readBack: string }> {
  const posts = app.get(DataSource).getRepository(Post);
  const saved = await posts.save(posts.create({ title: 'hello' }));
  const readBack = await posts.findOneByOrFail({ id: saved.id });
  return { saved: saved.id, readBack: readBack.id };
}
