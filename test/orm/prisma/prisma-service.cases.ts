import 'reflect-metadata';
import { Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IdService, SnowflakeModule } from '../../../lib/index.js';
import { snowflakeExtension } from '../../../lib/prisma.js';
import { INVOICE_FIELDS, type Harness } from './prisma-test.harness.js';

const WORKER = 6;
const DATACENTER = 3;

/** The database the app's provider connects to: set by the suite before the app boots. */
let harness: Harness;

/**
 * The pattern docs/prisma.md shows: the extended client is the provider itself, under a class token named as the
 * type, so that services keep `constructor(private prisma: PrismaService)` and `this.prisma.post`.
 */
const createPrismaService = (ids: IdService) => harness.newClient().$extends(snowflakeExtension(ids, INVOICE_FIELDS));
type PrismaService = ReturnType<typeof createPrismaService>;
// The type of a constructor parameter is a value at run time (decorator metadata): this class is Nest's token.
const PrismaService = class PrismaService {} as unknown as abstract new () => PrismaService;

let disconnected = 0;

@Module({
  providers: [{ provide: PrismaService, inject: [IdService], useFactory: createPrismaService }],
  exports: [PrismaService],
})
class PrismaModule implements OnModuleDestroy {
  constructor(private readonly prisma: PrismaService) {}

  async onModuleDestroy(): Promise<void> {
    await this.prisma.$disconnect();
    disconnected++;
  }
}

@Injectable()
class PostsService {
  // No @Inject(): Nest finds the provider by the parameter's type, as with `class PrismaService extends PrismaClient`.
  constructor(private readonly prisma: PrismaService) {}

  write(authorId: bigint, title: string) {
    return this.prisma.post.create({ data: { title, authorId } });
  }

  signUp(email: string) {
    return this.prisma.user.create({
      data: { email, posts: { create: [{ title: 'one' }, { title: 'two' }] } },
      include: { posts: true },
    });
  }

  bill(total: number) {
    return this.prisma.invoice.create({ data: { total } });
  }
}

@Module({
  imports: [
    SnowflakeModule.forRoot({ workerId: WORKER, datacenterId: DATACENTER, layout: 'twitter', isGlobal: true }),
    PrismaModule,
  ],
  providers: [PostsService],
})
class AppModule {}

/** The class-token PrismaService in a Nest app, against a real database (SQLite or PostgreSQL). */
export function prismaServiceCases(open: () => Promise<Harness>): void {
  beforeAll(async () => {
    harness = await open();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('fills IDs through `this.prisma.post.create(…)` in a service injected by type, read back exactly', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const ids = app.get(IdService);
    const posts = app.get(PostsService);
    const expectOurs = (id: bigint | string) =>
      expect(ids.decode(id)).toMatchObject({ workerId: WORKER, datacenterId: DATACENTER });

    const user = await posts.signUp('service@example.com');
    const post = await posts.write(user.id, 'three');
    const invoice = await posts.bill(42);

    expect(typeof user.id).toBe('bigint');
    expect(typeof post.id).toBe('bigint');
    for (const id of [user.id, user.handle!, ...user.posts.map((p) => p.id), post.id, invoice.id]) expectOurs(id);
    expectOurs(invoice.reference.toFixed());
    // Every ID distinct, and each row found again by the very value the service was given.
    const all = [user.id, ...user.posts.map((p) => p.id), post.id, invoice.id];
    expect(new Set(all).size).toBe(all.length);
    const read = await harness.client.post.findMany({ where: { authorId: user.id }, orderBy: { id: 'asc' } });
    expect(read.map((p) => [p.id, p.title])).toEqual(
      [...user.posts, post].sort((a, b) => (a.id < b.id ? -1 : 1)).map((p) => [p.id, p.title]),
    );
    expect((await harness.client.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).reference.toFixed()).toBe(
      invoice.reference.toFixed(),
    );

    const before = disconnected;
    await app.close();
    expect(disconnected).toBe(before + 1);
  });
}
