import 'reflect-metadata';
import { Inject, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { IdService, SnowflakeModule } from '../../../lib/index.js';
import { snowflakeExtension } from '../../../lib/prisma.js';
import { PrismaClient } from './generated/sqlite/client.js';
import { openSqlite, type SqliteHarness } from './sqlite.harness.js';

let harness: SqliteHarness;

/** The app's client with the extension: one function, so its type can be named. */
function createPrisma(ids: IdService) {
  return new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${harness.file}` }) }).$extends(
    snowflakeExtension(ids, { fields: { Invoice: ['id', 'reference'] } }),
  );
}
type AppPrisma = ReturnType<typeof createPrisma>;

/** The service style: injects IdService, exposes the extended client, disconnects on shutdown. */
@Injectable()
class PrismaService implements OnModuleDestroy {
  readonly db: AppPrisma;
  disconnected = false;

  constructor(ids: IdService) {
    this.db = createPrisma(ids);
  }

  async onModuleDestroy(): Promise<void> {
    await this.db.$disconnect();
    this.disconnected = true;
  }
}

/** The factory style: the extended client itself under a token. */
const PRISMA = Symbol('PRISMA');

@Module({
  imports: [SnowflakeModule.forRoot({ workerId: 5, datacenterId: 1, layout: 'twitter' })],
  providers: [PrismaService, { provide: PRISMA, inject: [IdService], useFactory: createPrisma }],
  exports: [PrismaService, PRISMA],
})
class PrismaModule {}

@Injectable()
class UsersService {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(PRISMA) private readonly direct: AppPrisma,
  ) {}

  signUp(email: string) {
    return this.prisma.db.user.create({
      data: { email, posts: { create: { title: 'hello' } } },
      include: { posts: true },
    });
  }

  invoice(total: number) {
    return this.direct.invoice.create({ data: { total } });
  }
}

describe('Prisma extension in a Nest app, with IdService from SnowflakeModule', () => {
  beforeAll(async () => {
    harness = await openSqlite();
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('fills IDs issued by the app’s worker, through a service and through a factory provider', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [PrismaModule],
      providers: [UsersService],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const ids = app.get(IdService);
    const users = app.get(UsersService);

    const user = await users.signUp('nest@example.com');
    const invoice = await users.invoice(10);
    for (const id of [user.id, user.handle!, user.posts[0].id, invoice.id, invoice.reference.toString()]) {
      expect(ids.decode(id)).toMatchObject({ workerId: 5, datacenterId: 1 });
    }
    expect(await harness.client.user.findUniqueOrThrow({ where: { id: user.id } })).toMatchObject({
      email: 'nest@example.com',
      handle: user.handle,
    });

    const service = app.get(PrismaService);
    await app.close();
    expect(service.disconnected).toBe(true);
  });
});
