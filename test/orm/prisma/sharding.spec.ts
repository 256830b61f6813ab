import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { SnowflakeCodec } from '../../../lib/core/codec.js';
import { ShardKeyMissingError, SnowflakeConfigError } from '../../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../../lib/core/generator.js';
import { resolveLayout } from '../../../lib/core/layout.js';
import { shardOfKey } from '../../../lib/core/shard-key.js';
import { IdService } from '../../../lib/module/id.service.js';
import { SnowflakeModule } from '../../../lib/module/snowflake.module.js';
import {
  PrismaIdFieldError,
  snowflakeExtension,
  type SnowflakeIdSource,
  type SnowflakePrismaOptions,
} from '../../../lib/prisma.js';
import type { Harness } from './prisma-test.harness.js';
import { openSqlite } from './sqlite.harness.js';

const layout = resolveLayout('sharded');
const codec = new SnowflakeCodec(layout);
const generator = new SnowflakeGenerator({ layout, workerId: 9 });
const SHARDS: SnowflakePrismaOptions = { shardFrom: { Post: 'authorId', Comment: 'postId', Profile: 'userId' } };
const shardOf = (key: bigint | string) => shardOfKey(key, layout.shardBits);

describe('snowflakeExtension({ shardFrom }) on SQLite', () => {
  let harness: Harness;
  const extend = (options: SnowflakePrismaOptions = SHARDS, ids: SnowflakeIdSource = generator) =>
    harness.client.$extends(snowflakeExtension(ids, options));
  let prisma: ReturnType<typeof extend>;

  beforeAll(async () => {
    harness = await openSqlite();
    prisma = extend();
  });

  afterAll(async () => {
    await harness?.close();
  });

  beforeEach(async () => {
    await harness.clear();
  });

  it('puts a row in the shard of its key field, for create and createMany', async () => {
    const author = await prisma.user.create({ data: { email: 'ada@example.com' } });
    const post = await prisma.post.create({ data: { title: 'one', authorId: author.id } });
    expect(codec.shardOf(post.id)).toBe(shardOf(author.id));
    expect(codec.decode(post.id)).toMatchObject({ workerId: 9, shard: shardOf(author.id) });
    await prisma.post.createMany({
      data: Array.from({ length: 5 }, (_, i) => ({ title: `many ${i}`, authorId: author.id })),
    });
    const posts = await harness.client.post.findMany({ where: { authorId: author.id } });
    expect(posts).toHaveLength(6);
    expect(posts.map((p) => Number(p.id % 16n))).toEqual(new Array(6).fill(shardOf(author.id)));
  });

  it('takes the key from the row a nested create hangs under, at every depth', async () => {
    const user = await prisma.user.create({
      data: {
        email: 'grace@example.com',
        posts: { create: [{ title: 'a', comments: { create: [{ body: 'x' }, { body: 'y' }] } }, { title: 'b' }] },
        profile: { create: { bio: 'admiral' } },
      },
      include: { posts: { include: { comments: true } }, profile: true },
    });
    expect(user.posts).toHaveLength(2);
    for (const post of user.posts) {
      expect(codec.shardOf(post.id)).toBe(shardOf(user.id));
      for (const comment of post.comments) expect(codec.shardOf(comment.id)).toBe(shardOf(post.id));
    }
    expect(user.posts[0].comments).toHaveLength(2);
    expect(codec.shardOf(user.profile!.id)).toBe(shardOf(user.id));

    const other = await prisma.user.create({
      data: { email: 'linus@example.com', posts: { createMany: { data: [{ title: 'm1' }, { title: 'm2' }] } } },
    });
    // An update that names its row by another field gives no key for the rows it creates.
    await expect(
      prisma.user.update({ where: { email: 'linus@example.com' }, data: { posts: { create: { title: 'x' } } } }),
    ).rejects.toThrow(ShardKeyMissingError);
    const viaUpdate = await prisma.user.update({
      where: { id: other.id },
      data: { posts: { connectOrCreate: { where: { id: 1n }, create: { title: 'm3' } } } },
      include: { posts: true },
    });
    expect(viaUpdate.posts).toHaveLength(3);
    expect(viaUpdate.posts.map((p) => codec.shardOf(p.id))).toEqual(new Array(3).fill(shardOf(other.id)));
  });

  it('takes the key from connect, from a related row created with it, and from the where of an update', async () => {
    const user = await prisma.user.create({ data: { email: 'edsger@example.com' } });
    const connected = await prisma.post.create({ data: { title: 'c', author: { connect: { id: user.id } } } });
    expect(codec.shardOf(connected.id)).toBe(shardOf(user.id));

    const withAuthor = await prisma.post.create({
      data: { title: 'd', author: { create: { email: 'barbara@example.com' } } },
      include: { author: true },
    });
    expect(codec.shardOf(withAuthor.id)).toBe(shardOf(withAuthor.author.id));

    const updated = await prisma.user.update({
      where: { id: user.id },
      data: { posts: { create: { title: 'e' } } },
      include: { posts: true },
    });
    expect(updated.posts.map((p) => codec.shardOf(p.id))).toEqual([shardOf(user.id), shardOf(user.id)]);
  });

  it('fails a create whose key it cannot find, naming the field, and writes nothing', async () => {
    await prisma.user.create({ data: { email: 'known@example.com' } });
    const attempt = prisma.post.create({
      data: { title: 'lost', author: { connect: { email: 'known@example.com' } } },
    });
    await expect(attempt).rejects.toThrow(ShardKeyMissingError);
    await expect(
      prisma.post.create({ data: { title: 'lost', author: { connect: { email: 'known@example.com' } } } }),
    ).rejects.toThrow(/Cannot fill Post\.id: its shard comes from `authorId`, which the row does not set/);
    expect(await harness.client.post.count()).toBe(0);
  });

  it('refuses shardFrom without a shard field in the layout, on unknown models and on relation fields', () => {
    const twitter = new SnowflakeGenerator({ layout: resolveLayout('twitter'), workerId: 1 });
    expect(() => snowflakeExtension(twitter, SHARDS)).toThrow(SnowflakeConfigError);
    expect(() => snowflakeExtension(twitter, SHARDS)).toThrow(/`shardFrom\.Post`.*no shard field.*'sharded' preset/);
    expect(() => snowflakeExtension({ next: () => generator.next() }, SHARDS)).toThrow(/has no `layout`/);
    expect(() => extend({ shardFrom: { Order: 'userId' } })).toThrow(/`shardFrom` names no model `Order`/);
    expect(() => extend({ shardFrom: { Post: 'author' } })).toThrow(PrismaIdFieldError);
    expect(() => extend({ shardFrom: { Post: 'author' } })).toThrow(/must name a scalar field.*authorId/);
  });

  it("works from the app's IdService, as apps apply it", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ workerId: 12, layout: 'sharded' })],
    }).compile();
    try {
      const ids = moduleRef.get(IdService);
      const db = extend(SHARDS, ids);
      const user = await db.user.create({
        data: { email: 'service@example.com', posts: { create: [{ title: 'p' }, { title: 'q' }] } },
        include: { posts: true },
      });
      expect(ids.decode(user.id)).toMatchObject({ workerId: 12, shard: 0 });
      expect(user.posts.map((p) => ids.shardOf(p.id))).toEqual([ids.shardOfKey(user.id), ids.shardOfKey(user.id)]);
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses an ID from a source that drops the key, rather than store it in the wrong shard', async () => {
    // A user ID whose shard is not 0, so that an ID issued without the key cannot pass by chance.
    let authorId = generator.next();
    while (shardOf(authorId) === 0) authorId = generator.next();
    await prisma.user.create({ data: { id: authorId, email: 'wrapped@example.com' } });
    const dropping = extend(SHARDS, { next: () => generator.next(), layout });
    await expect(dropping.post.create({ data: { title: 'wrong', authorId } })).rejects.toThrow(
      /issued .* in shard 0 for a key of shard .*: its next\(\) must pass its options on/,
    );
    expect(await harness.client.post.count()).toBe(0);
  });
});
