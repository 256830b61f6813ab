/**
 * `@GeneratedId({ generator })`: entity IDs from a named SnowflakeModule registration, on SQLite, through
 * SnowflakeTypeOrmModule and through attachGeneratedIds().
 */
import { Module } from '@nestjs/common';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import { Column, DataSource, Entity } from 'typeorm';
import {
  getIdServiceToken,
  IdService,
  SnowflakeCodec,
  SnowflakeModule,
  UnknownGeneratorError,
  resolveLayout,
} from '../../../lib/index.js';
import {
  attachGeneratedIds,
  GeneratedId,
  GeneratedIdTypeError,
  safeIntegerDriver,
  SnowflakeTypeOrmModule,
} from '../../../lib/typeorm.js';
import { bootModules, RecordingLogger } from './support/app.js';
import { sqliteDirectory, uniqueSuffix } from '../../support/databases.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

const twitter = new SnowflakeCodec(resolveLayout('twitter'));
const standard = new SnowflakeCodec(resolveLayout('default'));

function entities() {
  @Entity(`sf_named_user_${uniqueSuffix()}`)
  class User {
    @GeneratedId()
    id!: bigint;

    @Column({ type: 'varchar' })
    email!: string;
  }

  /** Its key from the orders generator, its public number from the default one. */
  @Entity(`sf_named_order_${uniqueSuffix()}`)
  class Order {
    @GeneratedId({ generator: 'orders' })
    id!: string;

    @GeneratedId({ primary: false, name: 'public_id' })
    publicId!: bigint;

    @Column({ type: 'int' })
    n!: number;
  }
  return { User, Order };
}

function sqliteOptions(entityList: Array<new () => object>): TypeOrmModuleOptions {
  return {
    type: 'better-sqlite3',
    database: files.path(`${uniqueSuffix()}.db`),
    driver: safeIntegerDriver(Database),
    entities: entityList,
    synchronize: true,
  };
}

/** The orders registration lives in a feature module that is not global, as an orders service would have it. */
@Module({ imports: [SnowflakeModule.forRoot({ name: 'orders', workerId: 2, layout: 'twitter', datacenterId: 3 })] })
class OrdersModule {}

describe('@GeneratedId({ generator }) through SnowflakeTypeOrmModule', () => {
  it('fills each property from its own registration, in save(), insert() and bulk inserts', async () => {
    const { User, Order } = entities();
    const logger = new RecordingLogger();
    const app = await bootModules(
      [
        SnowflakeModule.forRoot({ workerId: 1 }),
        OrdersModule,
        TypeOrmModule.forRoot(sqliteOptions([User, Order])),
        SnowflakeTypeOrmModule,
      ],
      logger,
    );
    try {
      const dataSource = app.get(DataSource);
      const orders = dataSource.getRepository(Order);
      const saved = await orders.save({ n: 1 });
      const inserted = { n: 2 };
      await orders.insert(inserted);
      const bulk = Array.from({ length: 200 }, (_, i) => ({ n: 3 + i }));
      await orders.insert(bulk);
      const user = await dataSource.getRepository(User).save({ email: 'a@example.com' });

      const rows = [saved, inserted, ...bulk] as Array<InstanceType<typeof Order>>;
      for (const row of rows) {
        expect(twitter.decode(row.id)).toMatchObject({ workerId: 2, datacenterId: 3 });
        expect(standard.decode(row.publicId)).toMatchObject({ workerId: 1, datacenterId: 0 });
      }
      expect(standard.decode(user.id)).toMatchObject({ workerId: 1 });
      expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);

      // What the database holds is what was issued, read back exactly.
      const stored = await orders.find({ order: { n: 'ASC' } });
      expect(stored.map((row) => [row.id, row.publicId])).toEqual(rows.map((row) => [row.id, row.publicId]));
      const orderIds = app.get<IdService>(getIdServiceToken('orders'), { strict: false });
      expect(orderIds.status().issued).toBe(rows.length);
      expect(logger.warnings).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('fails the bootstrap on a generator name the app does not register, naming the entity, property and the names', async () => {
    @Entity(`sf_named_typo_${uniqueSuffix()}`)
    class Invoice {
      @GeneratedId({ generator: 'ordres' })
      id!: bigint;
    }
    const boot = bootModules([
      SnowflakeModule.forRoot({ workerId: 1 }),
      OrdersModule,
      TypeOrmModule.forRoot(sqliteOptions([Invoice])),
      SnowflakeTypeOrmModule,
    ]);
    await expect(boot).rejects.toThrow(UnknownGeneratorError);
    await expect(boot).rejects.toThrow(
      /@GeneratedId\(\{ generator: "ordres" \}\) on Invoice\.id takes IDs from the SnowflakeModule registration "ordres", which the app does not have: it registers "default", "orders"/,
    );
  });

  it('fails the bootstrap on a property without generator when the app registers only named generators', async () => {
    const { User } = entities();
    const boot = bootModules([OrdersModule, TypeOrmModule.forRoot(sqliteOptions([User])), SnowflakeTypeOrmModule]);
    await expect(boot).rejects.toThrow(UnknownGeneratorError);
    await expect(boot).rejects.toThrow(/@GeneratedId\(\) on User\.id .*"default".*it registers "orders"/);
  });
});

describe('attachGeneratedIds() with named generators', () => {
  /** Services a test started, shut down after it so that the next test may take the same worker ID. */
  const started: IdService[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((ids) => ids.onApplicationShutdown()));
  });

  async function startedIds(options: ConstructorParameters<typeof IdService>[0]): Promise<IdService> {
    const ids = new IdService(options);
    await ids.onModuleInit();
    started.push(ids);
    return ids;
  }

  it('takes `generators` by name, and checks each property against its own layout', async () => {
    @Entity(`sf_named_counter_${uniqueSuffix()}`)
    class Counter {
      // A JS number is fine from a 53-bit generator even though the default one is wider.
      @GeneratedId({ generator: 'small' })
      id!: number;

      @GeneratedId({ primary: false, name: 'wide_id' })
      wideId!: bigint;
    }
    const ds = await new DataSource(sqliteOptions([Counter]) as never).initialize();
    try {
      const wide = await startedIds({ workerId: 40 });
      const small = await startedIds({ workerId: 41, layout: 'js-safe' });
      await attachGeneratedIds(ds, wide, { generators: { small } });
      const row = await ds.getRepository(Counter).save({});
      expect(typeof row.id).toBe('number');
      expect(small.decode(row.id).workerId).toBe(41);
      expect(wide.decode(row.wideId).workerId).toBe(40);
    } finally {
      await ds.destroy();
    }
  });

  it('refuses a `number` property whose own generator is wider than 53 bits, and a name not in `generators`', async () => {
    @Entity(`sf_named_wide_${uniqueSuffix()}`)
    class WideNumber {
      @GeneratedId({ generator: 'wide' })
      id!: number;
    }
    const ds = await new DataSource(sqliteOptions([WideNumber]) as never).initialize();
    try {
      const small = await startedIds({ workerId: 42, layout: 'js-safe' });
      const wide = await startedIds({ workerId: 43 });
      await expect(attachGeneratedIds(ds, small, { generators: { wide } })).rejects.toThrow(GeneratedIdTypeError);
      await expect(attachGeneratedIds(ds, small)).rejects.toThrow(
        /on WideNumber\.id takes IDs from the SnowflakeModule registration "wide", .* it registers "default"/,
      );
    } finally {
      await ds.destroy();
    }
  });
});
