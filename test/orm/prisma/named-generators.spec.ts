/**
 * The Prisma extension with named generators: a named registration's IdService passed in, and per-model generators
 * (`generators`), nested creates included, on SQLite.
 */
import 'reflect-metadata';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import {
  getIdServiceToken,
  IdService,
  InjectIdService,
  SnowflakeConfigError,
  SnowflakeModule,
} from '../../../lib/index.js';
import { snowflakeExtension } from '../../../lib/prisma.js';
import { PrismaClient } from './generated/sqlite/client.js';
import { openSqlite, type SqliteHarness } from './sqlite.harness.js';

let harness: SqliteHarness;

function client(): PrismaClient {
  return new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${harness.file}` }) });
}

/** Orders and their lines take IDs from the orders generator; everything else from the default one. */
@Injectable()
class PrismaService {
  readonly db;

  constructor(ids: IdService, @InjectIdService('orders') orderIds: IdService) {
    this.db = client().$extends(
      snowflakeExtension(ids, {
        fields: { Invoice: ['id', 'reference'] },
        generators: { Invoice: orderIds, Post: orderIds },
      }),
    );
  }
}

describe('snowflakeExtension with named generators', () => {
  let app: INestApplicationContext;
  let ids: IdService;
  let orderIds: IdService;

  beforeAll(async () => {
    harness = await openSqlite();
    const moduleRef = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({ workerId: 6 }),
        SnowflakeModule.forRoot({ name: 'orders', workerId: 7, layout: 'twitter', datacenterId: 2 }),
      ],
      providers: [PrismaService],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    ids = app.get(IdService);
    orderIds = app.get<IdService>(getIdServiceToken('orders'));
  });

  afterAll(async () => {
    await app?.close();
    await harness?.close();
  });

  it("fills each model from its own generator, nested creates too, and the rest from the extension's", async () => {
    const { db } = app.get(PrismaService);
    const user = await db.user.create({
      data: { email: 'named@example.com', posts: { create: [{ title: 'a' }, { title: 'b' }] } },
      include: { posts: true },
    });
    const invoice = await db.invoice.create({ data: { total: 10 } });

    expect(ids.decode(user.id)).toMatchObject({ workerId: 6, datacenterId: 0 });
    expect(ids.decode(user.handle!)).toMatchObject({ workerId: 6 });
    for (const id of [user.posts[0].id, user.posts[1].id, invoice.id, invoice.reference.toString()]) {
      expect(orderIds.decode(id)).toMatchObject({ workerId: 7, datacenterId: 2 });
    }
    expect(orderIds.status().issued).toBe(4);
    expect(ids.status().issued).toBe(2);
  });

  it('takes a named IdService as the source of every model, as any IdService', async () => {
    const db = client().$extends(snowflakeExtension(orderIds, { fields: { Invoice: 'id' }, marker: false }));
    try {
      const invoice = await db.invoice.create({ data: { total: 1, reference: '1' } });
      expect(orderIds.decode(invoice.id)).toMatchObject({ workerId: 7, datacenterId: 2 });
    } finally {
      await db.$disconnect();
    }
  });

  it('refuses a generator that is not an ID source at once, and a model without fields to fill when applied', () => {
    expect(() => snowflakeExtension(ids, { generators: { Invoice: {} as never } })).toThrow(
      /option `generators\.Invoice`: pass an ID source with next\(\)/,
    );
    const plain = client();
    try {
      expect(() => plain.$extends(snowflakeExtension(ids, { generators: { Invoices: orderIds } }))).toThrow(
        SnowflakeConfigError,
      );
      expect(() => plain.$extends(snowflakeExtension(ids, { generators: { Invoice: orderIds } }))).toThrow(
        /option `generators\.Invoice`: the model "Invoice" has no field to fill/,
      );
    } finally {
      void plain.$disconnect();
    }
  });
});
