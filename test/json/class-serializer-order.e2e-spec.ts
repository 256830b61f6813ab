/**
 * `BigIntSerializerInterceptor` beside Nest's `ClassSerializerInterceptor`, on a real app: the copies it makes keep
 * their class (so `@Exclude()` still applies), but their bigint fields are strings by then, so a class getter that
 * computes with one works only when `ClassSerializerInterceptor` sees the object first (docs/http.md).
 */
import 'reflect-metadata';
import { ClassSerializerInterceptor, Controller, Get, Module, UseInterceptors } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Exclude, Expose } from 'class-transformer';
import type { Server } from 'node:http';
import request from 'supertest';
import { BigIntSerializerInterceptor } from '../../lib/index.js';

const ID = 118396408435834881n;

class Post {
  @Exclude()
  readonly secret = 'hidden';

  constructor(readonly id: bigint) {}

  @Expose()
  get shard(): number {
    return Number(this.id & 15n);
  }
}

@Controller('posts')
class PostsController {
  @Get()
  one(): Post {
    return new Post(ID);
  }
}

@Controller('scoped')
@UseInterceptors(BigIntSerializerInterceptor)
class ScopedController {
  @Get()
  one(): Post {
    return new Post(ID);
  }

  @Get('plain')
  plain(): { id: bigint } {
    return { id: ID };
  }
}

@Module({ controllers: [PostsController, ScopedController] })
class AppModule {}

async function app() {
  const module = await Test.createTestingModule({ imports: [AppModule] }).compile();
  return module.createNestApplication({ logger: false });
}

describe('BigIntSerializerInterceptor and ClassSerializerInterceptor together', () => {
  it('both global, BigIntSerializerInterceptor first: the getter computes on the bigint, @Exclude() holds', async () => {
    const nest = await app();
    nest.useGlobalInterceptors(new BigIntSerializerInterceptor(), new ClassSerializerInterceptor(nest.get(Reflector)));
    await nest.init();
    try {
      const answer = await request(nest.getHttpServer() as Server)
        .get('/posts')
        .expect(200);
      expect(answer.body).toEqual({ id: ID.toString(), shard: Number(ID & 15n) });
    } finally {
      await nest.close();
    }
  });

  // Found by a review: the docs said the order did not matter.
  it('on a controller under a global ClassSerializerInterceptor: the getter meets a string, and the answer is 500', async () => {
    const nest = await app();
    nest.useGlobalInterceptors(new ClassSerializerInterceptor(nest.get(Reflector)));
    await nest.init();
    try {
      const server = nest.getHttpServer() as Server;
      // The interceptor runs on this controller: an object without a getter leaves with its ID as a string.
      expect((await request(server).get('/scoped/plain').expect(200)).body).toEqual({ id: ID.toString() });
      await request(server).get('/scoped').expect(500);
    } finally {
      await nest.close();
    }
  });
});
