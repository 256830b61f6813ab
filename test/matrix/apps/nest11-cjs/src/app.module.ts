import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SnowflakeModule } from 'nestjs-snowflake';
import { SnowflakeHealthModule } from 'nestjs-snowflake/health';
import { SnowflakeTypeOrmModule } from 'nestjs-snowflake/typeorm';
import { PostIds } from './post-ids.service';
import { redis } from './redis.client';
import { Post } from './post.entity';

@Module({
  imports: [
    SnowflakeModule.forRoot({ redis: { client: redis } }),
    SnowflakeHealthModule,
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL,
      schema: process.env.DATABASE_SCHEMA,
      entities: [Post],
      synchronize: true,
    }),
    SnowflakeTypeOrmModule,
  ],
  providers: [PostIds],
})
export class AppModule {}
