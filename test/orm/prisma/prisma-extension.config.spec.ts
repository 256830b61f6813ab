import { readFileSync } from 'node:fs';
import { SnowflakeConfigError, SnowflakeError } from '../../../lib/core/errors.js';
import { buildIdPlan } from '../../../lib/orm/prisma/prisma-id.plan.js';
import { parsePrismaSchema } from '../../../lib/orm/prisma/prisma-schema.parser.js';
import {
  PrismaIdFieldError,
  PrismaModelMetadataError,
  snowflakeExtension,
  type SnowflakePrismaOptions,
} from '../../../lib/prisma.js';
import { testIds, type Harness } from './prisma-test.harness.js';
import { openSqlite } from './sqlite.harness.js';

const SCHEMA = readFileSync(new URL('./schema.prisma', import.meta.url), 'utf8');
const { generator, codec } = testIds(4, 1);

describe('snowflakeExtension: resolving fields when applied', () => {
  let harness: Harness;
  const apply = (options?: SnowflakePrismaOptions) => harness.client.$extends(snowflakeExtension(generator, options));

  beforeAll(async () => {
    harness = await openSqlite();
  });

  afterAll(async () => {
    await harness?.close();
  });

  beforeEach(async () => {
    await harness.clear();
  });

  it('refuses an Int field, naming the model, the field and the fix', () => {
    const attempt = () => apply({ fields: { Invoice: 'total' } });
    expect(attempt).toThrow(PrismaIdFieldError);
    expect(attempt).toThrow(/`Invoice\.total`.*Int is a 32-bit column.*Declare the field `BigInt`/);
  });

  it('refuses unknown models and fields, listing what exists', () => {
    expect(() => apply({ fields: { Users: 'id' } })).toThrow(
      /`Users\.id`: there is no model `Users` \(models: User, Post, Comment, Profile, Invoice\)/,
    );
    expect(() => apply({ fields: { User: 'uid' } })).toThrow(/the model has no such field \(fields: id, email/);
  });

  it('refuses a relation field', () => {
    expect(() => apply({ fields: { User: 'posts' } })).toThrow(/`User\.posts`: it is a relation to `Post`/);
  });

  it('refuses a configuration that fills nothing, and an ID source without next()', () => {
    expect(() => apply({ marker: false })).toThrow(SnowflakeConfigError);
    expect(() => apply({ marker: false })).toThrow(/no field to fill.*\/\/\/ @GeneratedId/);
    expect(() => snowflakeExtension({} as never)).toThrow(/next\(\): bigint/);
  });

  it('throws only SnowflakeError subclasses, so callers can catch them together', () => {
    const wrong: SnowflakePrismaOptions[] = [
      { fields: { Invoice: 'total' } },
      { fields: { X: 'id' } },
      { marker: false },
    ];
    for (const options of wrong) {
      expect(() => apply(options)).toThrow(SnowflakeError);
    }
  });

  it('reads the marks from given schema text instead of the client’s copy', async () => {
    // Only Post.id is marked here: User.id is left empty and the insert fails on NOT NULL.
    const schema = SCHEMA.replace(/\/\/\/ @GeneratedId\n(\s+)(id|handle) /g, '$1$2 ').replace(
      /model Post \{\n/,
      'model Post {\n  /// @GeneratedId\n',
    );
    const prisma = apply({ schema, fields: { User: 'id' } });
    const user = await prisma.user.create({ data: { email: 'a@example.com' } });
    expect(codec.decode(user.id).workerId).toBe(4);
    expect(user.handle).toBeNull();
    const post = await prisma.post.create({ data: { title: 't', authorId: user.id } });
    expect(codec.decode(post.id).workerId).toBe(4);
  });

  it('takes a DMMF datamodel and a custom marker', async () => {
    const datamodel = parsePrismaSchema(SCHEMA.replaceAll('@GeneratedId', '@Snowflake'));
    const prisma = apply({ datamodel, marker: '@Snowflake' });
    const user = await prisma.user.create({ data: { email: 'b@example.com' } });
    expect(codec.decode(user.id).workerId).toBe(4);
    expect(codec.decode(user.handle!).workerId).toBe(4);
    expect(() => apply({ datamodel })).toThrow(/no field to fill/);
  });

  it('leaves models without fields to fill, and their queries, untouched', async () => {
    const prisma = apply({ marker: false, fields: { Invoice: 'id' } });
    await expect(prisma.user.create({ data: { email: 'c@example.com' } })).rejects.toThrow();
    const invoice = await prisma.invoice.create({ data: { total: 1, reference: '7' } });
    expect(invoice.reference.toString()).toBe('7');
    expect(codec.decode(invoice.id).workerId).toBe(4);
  });
});

describe('buildIdPlan without the client internals it prefers', () => {
  const datamodel = parsePrismaSchema(SCHEMA);
  const strip = (dm: typeof datamodel) => ({
    models: dm.models.map((m) => ({ ...m, fields: m.fields.map(({ documentation: _, ...f }) => f) })),
  });

  it('works from the runtime data model plus schema text, as the generated client carries them', () => {
    const plan = buildIdPlan({ datamodel: strip(datamodel), schemaText: SCHEMA }, {});
    expect(plan.get('User')?.ids).toEqual([
      { field: 'id', as: 'bigint' },
      { field: 'handle', as: 'string' },
    ]);
    expect(plan.get('Comment')?.ids).toEqual([{ field: 'id', as: 'string' }]);
    expect([...plan.get('User')!.relations]).toEqual([
      ['posts', 'Post'],
      ['profile', 'Profile'],
    ]);
    expect(plan.has('Invoice')).toBe(false);
  });

  it('says why when there is no schema text to read marks from, and when there is no model at all', () => {
    expect(() => buildIdPlan({ datamodel: strip(datamodel) }, {})).toThrow(/no schema text was available/);
    expect(buildIdPlan({ datamodel: strip(datamodel) }, { fields: { Post: 'id' } }).get('Post')?.ids).toEqual([
      { field: 'id', as: 'bigint' },
    ]);
    expect(() => buildIdPlan({}, {})).toThrow(PrismaModelMetadataError);
    expect(() => buildIdPlan({}, {})).toThrow(/pass the schema text/);
  });

  it('walks only relations that lead to fields to fill', () => {
    const invoices = buildIdPlan({ datamodel: strip(datamodel) }, { fields: { Invoice: 'id' } });
    expect([...invoices.keys()]).toEqual(['Invoice']);

    // Every other model reaches Comment: Post directly, User through posts, Profile through its user
    // (profile.create({ data: { user: { create: { posts: … } } } })).
    const comments = buildIdPlan({ datamodel: strip(datamodel) }, { fields: { Comment: 'id' } });
    expect([...comments.keys()].sort()).toEqual(['Comment', 'Post', 'Profile', 'User']);
    expect([...comments.get('Profile')!.relations]).toEqual([['user', 'User']]);
    expect(comments.get('Post')!.ids).toEqual([]);
  });
});
