import { readFileSync } from 'node:fs';
import { parsePrismaSchema } from '../../../lib/orm/prisma/prisma-schema.parser.js';

const field = (schema: string | string[], model: string, name: string) =>
  parsePrismaSchema(schema)
    .models.find((m) => m.name === model)
    ?.fields.find((f) => f.name === name);

describe('parsePrismaSchema', () => {
  it('reads the test schema: models, kinds, lists and doc comments', () => {
    const { models } = parsePrismaSchema(readFileSync(new URL('./schema.prisma', import.meta.url), 'utf8'));
    expect(models.map((m) => m.name)).toEqual(['User', 'Post', 'Comment', 'Profile', 'Invoice']);
    const user = models.find((m) => m.name === 'User')!;
    expect(user.fields.map((f) => [f.name, f.kind, f.type, f.isList])).toEqual([
      ['id', 'scalar', 'BigInt', false],
      ['email', 'scalar', 'String', false],
      ['handle', 'scalar', 'String', false],
      ['name', 'scalar', 'String', false],
      ['posts', 'object', 'Post', true],
      ['profile', 'object', 'Profile', false],
    ]);
    expect(user.fields[0].documentation).toBe('@GeneratedId');
    expect(user.fields[2].documentation).toBe('A second generated column, as a decimal string.\n@GeneratedId');
    expect(user.fields[1].documentation).toBeUndefined();
  });

  it('reads the name, fields and references of a @relation attribute, the foreign keys a shard key follows', () => {
    const schema = `
      model Order {
        id        BigInt @id
        tenant    String
        userId    BigInt
        user      User   @relation("Placed", fields: [tenant, userId], references: [tenant, id], onDelete: Cascade)
        reviewer  User?  @relation(name: "Reviewed", fields: [reviewerId], references: [id])
        reviewerId BigInt?
      }
      model User {
        id     BigInt  @id
        tenant String
        orders Order[] @relation("Placed")
      }`;
    expect(field(schema, 'Order', 'user')).toMatchObject({
      kind: 'object',
      relationName: 'Placed',
      relationFromFields: ['tenant', 'userId'],
      relationToFields: ['tenant', 'id'],
    });
    expect(field(schema, 'Order', 'reviewer')).toMatchObject({
      relationName: 'Reviewed',
      relationFromFields: ['reviewerId'],
      relationToFields: ['id'],
    });
    expect(field(schema, 'User', 'orders')).toMatchObject({ relationName: 'Placed' });
    expect(field(schema, 'User', 'orders')).not.toHaveProperty('relationFromFields');
    expect(field(schema, 'Order', 'userId')).not.toHaveProperty('relationName');
  });

  it('attaches a trailing /// comment to its own field, and ignores // comments and // inside strings', () => {
    const schema = `
      model A {
        id   BigInt @id /// @GeneratedId
        // @GeneratedId is not documentation here
        url  String @default("http://example.com") // plain
        kind Kind
        raw  Unsupported("circle")?
        @@map("a")
      }
      enum Kind {
        /// an enum value, not a field
        ONE
      }`;
    expect(field(schema, 'A', 'id')?.documentation).toBe('@GeneratedId');
    expect(field(schema, 'A', 'url')).toEqual({ name: 'url', type: 'String', kind: 'scalar', isList: false });
    expect(field(schema, 'A', 'kind')?.kind).toBe('enum');
    expect(field(schema, 'A', 'raw')?.kind).toBe('unsupported');
    expect(parsePrismaSchema(schema).models.map((m) => m.name)).toEqual(['A']);
  });

  it('reads a multi-file schema given as several strings, relations across files included', () => {
    const files = [
      'model A {\n  id BigInt @id\n  bs B[]\n}',
      'model B {\n  /// @GeneratedId\n  id BigInt @id\n  a A\n}',
    ];
    expect(field(files, 'A', 'bs')).toMatchObject({ kind: 'object', type: 'B', isList: true });
    expect(field(files, 'B', 'id')?.documentation).toBe('@GeneratedId');
  });

  it('skips block comments and does not carry a doc comment past a block attribute', () => {
    const schema =
      'model A {\n  /* block\n  id2 Int */\n  id BigInt @id\n  /// dangling\n  @@index([id])\n  b String\n}';
    expect(parsePrismaSchema(schema).models[0].fields.map((f) => f.name)).toEqual(['id', 'b']);
    expect(field(schema, 'A', 'b')?.documentation).toBeUndefined();
  });
});
