import { extendClient, testIds, type Harness, type TestClient } from './prisma-test.harness.js';

const WORKER = 9;
const DATACENTER = 2;

/**
 * The extension's behaviour against a real database, shared by the SQLite and PostgreSQL suites. Every ID is
 * checked to decode to the test generator's worker, which tells a filled ID from one the database made up.
 */
export function extensionCases(open: () => Promise<Harness>): void {
  let harness: Harness;
  let prisma: TestClient;
  const { generator, codec } = testIds(WORKER, DATACENTER);

  const expectOurs = (id: bigint | string | null | undefined) => {
    expect(id).not.toBeNull();
    expect(id).not.toBeUndefined();
    const parts = codec.decode(id!);
    expect([parts.workerId, parts.datacenterId]).toEqual([WORKER, DATACENTER]);
    expect(Math.abs(parts.timestamp - Date.now())).toBeLessThan(60_000);
  };

  beforeAll(async () => {
    harness = await open();
    prisma = extendClient(harness.client, generator);
  });

  afterAll(async () => {
    await harness?.close();
  });

  beforeEach(async () => {
    await harness.clear();
  });

  it('create fills a BigInt ID and a String ID, and the row reads back equal', async () => {
    const user = await prisma.user.create({ data: { email: 'ada@example.com' } });
    expect(typeof user.id).toBe('bigint');
    expectOurs(user.id);
    expect(user.handle).toMatch(/^[0-9]+$/);
    expectOurs(user.handle);
    expect(user.handle).not.toBe(user.id.toString());

    const read = await harness.client.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(read).toEqual(user);
  });

  it('keeps IDs the caller gives, null included', async () => {
    const given = generator.next() + 12345n;
    const user = await prisma.user.create({ data: { id: given, email: 'given@example.com', handle: null } });
    expect(user.id).toBe(given);
    expect(user.handle).toBeNull();
    const read = await harness.client.user.findUniqueOrThrow({ where: { email: 'given@example.com' } });
    expect([read.id, read.handle]).toEqual([given, null]);
  });

  it('reads back 2^63 − 1 and 2^53 + 1 exactly, as bigint and as decimal string', async () => {
    const top = 2n ** 63n - 1n;
    const unsafe = 2n ** 53n + 1n;
    await prisma.user.create({ data: { id: top, email: 'top@example.com', handle: unsafe.toString() } });
    await prisma.user.create({ data: { id: unsafe, email: 'unsafe@example.com', handle: top.toString() } });
    const read = await harness.client.user.findMany({ orderBy: { id: 'asc' } });
    expect(read.map((user) => [user.id, user.handle])).toEqual([
      [unsafe, top.toString()],
      [top, unsafe.toString()],
    ]);
    expect((await harness.client.user.findUniqueOrThrow({ where: { id: top } })).email).toBe('top@example.com');
  });

  it('gives two creates from one data object two IDs, and leaves the object as it was', async () => {
    const data = { email: 'same@example.com', posts: { create: { title: 'first' } } };
    const before = structuredClone(data);
    const a = await prisma.user.create({ data, include: { posts: true } });
    await harness.clear();
    const b = await prisma.user.create({ data, include: { posts: true } });
    expect(data).toEqual(before);
    expect(b.id).not.toBe(a.id);
    expect(b.posts[0].id).not.toBe(a.posts[0].id);
  });

  it('createMany fills every row with a distinct ID and keeps a given one', async () => {
    const given = generator.next();
    const result = await prisma.user.createMany({
      data: [{ email: 'm1@example.com' }, { email: 'm2@example.com', id: given }, { email: 'm3@example.com' }],
    });
    expect(result.count).toBe(3);
    const rows = await harness.client.user.findMany({ orderBy: { email: 'asc' } });
    expect(rows.map((r) => r.email)).toEqual(['m1@example.com', 'm2@example.com', 'm3@example.com']);
    expect(rows[1].id).toBe(given);
    for (const row of rows) {
      expectOurs(row.id);
      expectOurs(row.handle);
    }
    expect(new Set(rows.flatMap((r) => [r.id.toString(), r.handle])).size).toBe(6);
  });

  it('createManyAndReturn returns the filled IDs, equal to what reads back', async () => {
    const created = await prisma.post.createManyAndReturn({
      data: [
        { title: 'a', authorId: (await prisma.user.create({ data: { email: 'author@example.com' } })).id },
        { title: 'b', authorId: (await harness.client.user.findFirstOrThrow()).id },
      ],
    });
    expect(created).toHaveLength(2);
    created.forEach((post) => expectOurs(post.id));
    const read = await harness.client.post.findMany({ where: { id: { in: created.map((p) => p.id) } } });
    expect(new Set(read.map((p) => p.id))).toEqual(new Set(created.map((p) => p.id)));
  });

  it('upsert fills IDs in the create branch and leaves them alone in the update branch', async () => {
    const created = await prisma.user.upsert({
      where: { email: 'up@example.com' },
      create: { email: 'up@example.com', name: 'created' },
      update: { name: 'updated' },
    });
    expectOurs(created.id);
    expectOurs(created.handle);

    const updated = await prisma.user.upsert({
      where: { email: 'up@example.com' },
      create: { email: 'up@example.com', name: 'created again' },
      update: { name: 'updated', posts: { create: { title: 'made while updating' } } },
      include: { posts: true },
    });
    expect([updated.id, updated.handle, updated.name]).toEqual([created.id, created.handle, 'updated']);
    expect(updated.posts).toHaveLength(1);
    expectOurs(updated.posts[0].id);
    expect(await harness.client.user.count()).toBe(1);
  });

  it('fills nested creates: create inside create, to-one and to-many, two levels deep', async () => {
    const user = await prisma.user.create({
      data: {
        email: 'nested@example.com',
        profile: { create: { bio: 'hello' } },
        posts: {
          create: [
            { title: 'one', comments: { create: [{ body: 'c1' }, { body: 'c2' }] } },
            { title: 'two', comments: { create: { body: 'c3', id: 'given-comment-id' } } },
          ],
        },
      },
      include: { profile: true, posts: { include: { comments: true }, orderBy: { title: 'asc' } } },
    });
    expectOurs(user.id);
    expectOurs(user.profile!.id);
    expect(user.profile!.userId).toBe(user.id);
    const [one, two] = user.posts;
    expectOurs(one.id);
    expectOurs(two.id);
    expect(one.authorId).toBe(user.id);
    expect(one.comments).toHaveLength(2);
    for (const comment of one.comments) {
      expect(typeof comment.id).toBe('string');
      expectOurs(comment.id);
    }
    expect(two.comments.map((c) => c.id)).toEqual(['given-comment-id']);

    const ids = [user.id, user.profile!.id, one.id, two.id, ...one.comments.map((c) => BigInt(c.id))];
    expect(new Set(ids).size).toBe(ids.length);
    const read = await harness.client.user.findUniqueOrThrow({
      where: { id: user.id },
      include: { profile: true, posts: { include: { comments: true }, orderBy: { title: 'asc' } } },
    });
    expect(read).toEqual(user);
  });

  it('fills createMany inside create', async () => {
    const user = await prisma.user.create({
      data: { email: 'bulkposts@example.com', posts: { createMany: { data: [{ title: 'p1' }, { title: 'p2' }] } } },
      include: { posts: true },
    });
    expect(user.posts).toHaveLength(2);
    user.posts.forEach((post) => expectOurs(post.id));
    expect(user.posts[0].id).not.toBe(user.posts[1].id);
  });

  it('fills connectOrCreate when it creates, and connects without creating otherwise', async () => {
    const first = await prisma.post.create({
      data: {
        title: 'first',
        author: { connectOrCreate: { where: { email: 'coc@example.com' }, create: { email: 'coc@example.com' } } },
      },
      include: { author: true },
    });
    expectOurs(first.id);
    expectOurs(first.author.id);
    const second = await prisma.post.create({
      data: {
        title: 'second',
        author: { connectOrCreate: { where: { email: 'coc@example.com' }, create: { email: 'coc@example.com' } } },
      },
    });
    expect(second.authorId).toBe(first.author.id);
    expect(await harness.client.user.count()).toBe(1);
  });

  it('fills creates nested in updates: upsert of a to-one relation, update of a to-many one', async () => {
    const user = await prisma.user.create({ data: { email: 'upd@example.com', posts: { create: { title: 'p' } } } });
    const post = (await harness.client.post.findFirstOrThrow()).id;
    const updated = await prisma.user.update({
      where: { id: user.id },
      data: {
        profile: { upsert: { create: { bio: 'new' }, update: { bio: 'changed' } } },
        posts: { update: { where: { id: post }, data: { comments: { create: { body: 'deep' } } } } },
      },
      include: { profile: true, posts: { include: { comments: true } } },
    });
    expect(updated.id).toBe(user.id);
    expectOurs(updated.profile!.id);
    expect(updated.posts[0].id).toBe(post);
    expectOurs(updated.posts[0].comments[0].id);

    const again = await prisma.user.update({
      where: { id: user.id },
      data: { profile: { upsert: { create: { bio: 'unused' }, update: { bio: 'changed' } } } },
      include: { profile: true },
    });
    expect([again.profile!.id, again.profile!.bio]).toEqual([updated.profile!.id, 'changed']);
  });

  it('fills fields listed in the options: Decimal as a decimal string that reads back equal', async () => {
    const invoice = await prisma.invoice.create({ data: { total: 42 } });
    expectOurs(invoice.id);
    const reference = invoice.reference.toString();
    expect(reference).toMatch(/^[0-9]+$/);
    expectOurs(reference);
    const read = await harness.client.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
    expect(read.reference.toString()).toBe(reference);
  });

  it('fills inside interactive transactions', async () => {
    const user = await prisma.$transaction(async (tx) => tx.user.create({ data: { email: 'tx@example.com' } }));
    expectOurs(user.id);
  });

  it('gives 1,000 rows distinct IDs that read back equal to what was written', async () => {
    const written = await prisma.user.createManyAndReturn({
      data: Array.from({ length: 1000 }, (_, i) => ({ email: `bulk${i}@example.com` })),
    });
    expect(written).toHaveLength(1000);
    const values = written.flatMap((u) => [u.id.toString(), u.handle!]);
    expect(new Set(values).size).toBe(2000);
    written.forEach((u) => expectOurs(u.id));

    const read = await harness.client.user.findMany({ select: { id: true, handle: true, email: true } });
    const byEmail = new Map(read.map((u) => [u.email, u]));
    expect(read).toHaveLength(1000);
    for (const u of written) expect(byEmail.get(u.email)).toEqual({ id: u.id, handle: u.handle, email: u.email });

    const more = await prisma.user.createMany({
      data: Array.from({ length: 1000 }, (_, i) => ({ email: `bulk-b${i}@example.com` })),
    });
    expect(more.count).toBe(1000);
    const all = await harness.client.user.findMany({ select: { id: true } });
    expect(new Set(all.map((u) => u.id)).size).toBe(2000);
  });

  it('without the extension the same create fails, so the fills above are the extension’s doing', async () => {
    // The database refuses the row for its missing ID (P2011, a null constraint violation), not for anything else:
    // SQLite says "NOT NULL constraint failed: User.id", PostgreSQL 'null value in column "id" of relation "User"'.
    await expect(harness.client.user.create({ data: { email: 'plain@example.com' } })).rejects.toMatchObject({
      name: 'PrismaClientKnownRequestError',
      code: 'P2011',
      meta: {
        modelName: 'User',
        driverAdapterError: {
          cause: { kind: 'NullConstraintViolation', originalMessage: expect.stringMatching(/User\.id\b|column "id"/) },
        },
      },
    });
  });
}
