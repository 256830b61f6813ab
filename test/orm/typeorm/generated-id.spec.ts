import Database from 'better-sqlite3';
import { Column, DataSource, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { IdService } from '../../../lib/index.js';
import { exactBitsOf } from '../../../lib/orm/typeorm/generated-id.column-type.js';
import { generatedIdTransformer } from '../../../lib/orm/typeorm/generated-id.transformer.js';
import {
  attachGeneratedIds,
  DataSourceNotInitializedError,
  GeneratedId,
  GeneratedIdNotFilledError,
  GeneratedIdTypeError,
  IdPrecisionLossError,
  safeIntegerDriver,
} from '../../../lib/typeorm.js';
import { bootApp, RecordingLogger } from './support/app.js';
import { sqliteDirectory, uniqueSuffix } from '../../support/databases.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

/** Services a test started, shut down after it so that the next test may take the same worker ID. */
const started: IdService[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((ids) => ids.onApplicationShutdown()));
});

async function startedIds(options: ConstructorParameters<typeof IdService>[0] = { workerId: 1 }): Promise<IdService> {
  const ids = new IdService(options);
  await ids.onModuleInit();
  started.push(ids);
  return ids;
}

function sqlite(
  entities: Array<new () => object>,
  extra: Record<string, unknown> = { driver: safeIntegerDriver(Database) },
): DataSource {
  return new DataSource({
    type: 'better-sqlite3',
    database: files.path(`${uniqueSuffix()}.db`),
    entities,
    synchronize: true,
    ...extra,
  });
}

describe('@GeneratedId() declared types', () => {
  it('throws at class definition, naming class and property, when the declared type is not string, bigint or number', () => {
    const declare = () => {
      class Odd {
        @GeneratedId()
        id!: bigint | null;
      }
      return Odd;
    };
    expect(declare).toThrow(GeneratedIdTypeError);
    expect(declare).toThrow(/Odd\.id: .*`string`, `bigint` or `number`, or pass `\{ jsType \}`/);
  });

  it('throws at class definition for a column type narrower than any layout on every database', () => {
    for (const type of ['smallint', 'int2', 'int4', 'float4', 'tinyint', 'mediumint']) {
      const declare = () => {
        class Narrow {
          @GeneratedId({ primary: false, unique: false, type: type as never })
          id!: string;
        }
        return Narrow;
      };
      expect(declare).toThrow(GeneratedIdTypeError);
      expect(declare).toThrow(/Narrow\.id: the column type .* cannot hold every ID on every database\. Use 'bigint'/);
    }
    // Types whose width depends on the database or the layout are checked where both are known (below).
    for (const type of ['double', 'real', 'float', 'integer', 'int', Number, 'varchar', 'int8', 'numeric']) {
      expect(() => {
        class Depends {
          @GeneratedId({ primary: false, unique: false, type: type as never })
          id!: string;
        }
        return Depends;
      }).not.toThrow();
    }
  });

  it('takes `jsType` when the declared type cannot be read', async () => {
    @Entity(`sf_nullable_${uniqueSuffix()}`)
    class Nullable {
      @GeneratedId({ jsType: 'bigint' })
      id!: bigint | null;

      @Column({ type: 'varchar' })
      name!: string;
    }
    const ds = await sqlite([Nullable]).initialize();
    await attachGeneratedIds(ds, await startedIds());
    const saved = await ds.getRepository(Nullable).save({ name: 'x' });
    expect(typeof saved.id).toBe('bigint');
    expect((await ds.getRepository(Nullable).findOneByOrFail({ id: saved.id! })).id).toBe(saved.id);
    await ds.destroy();
  });

  it('fills an ID declared on a base class for every subclass entity', async () => {
    abstract class Base {
      @GeneratedId()
      id!: string;
    }
    @Entity(`sf_child_${uniqueSuffix()}`)
    class Child extends Base {
      @Column({ type: 'varchar' })
      name!: string;
    }
    const ds = await sqlite([Child]).initialize();
    await attachGeneratedIds(ds, await startedIds());
    const rows = [{ name: 'a' }, { name: 'b' }];
    await ds.getRepository(Child).insert(rows);
    const stored = await ds.getRepository(Child).find();
    expect(stored.map((row) => row.id).sort()).toEqual(rows.map((row) => (row as { id?: string }).id).sort());
    expect(new Set(stored.map((row) => row.id)).size).toBe(2);
    await ds.destroy();
  });

  describe('number', () => {
    function counterEntity() {
      @Entity(`sf_counter_${uniqueSuffix()}`)
      class Counter {
        @GeneratedId()
        id!: number;

        @Column({ type: 'varchar' })
        name!: string;
      }
      return Counter;
    }

    it('gives numbers with a layout of 53 bits or fewer', async () => {
      const Counter = counterEntity();
      const app = await bootApp(
        [
          {
            type: 'better-sqlite3',
            database: files.path(`${uniqueSuffix()}.db`),
            entities: [Counter],
            synchronize: true,
          },
        ],
        { workerId: 1, layout: 'js-safe' },
      );
      try {
        const repo = app.get(DataSource).getRepository(Counter);
        const rows = [{ name: 'a' }, { name: 'b' }, { name: 'c' }];
        await repo.insert(rows);
        const saved = await repo.save({ name: 'd' });
        expect(typeof saved.id).toBe('number');
        expect(Number.isSafeInteger(saved.id)).toBe(true);
        expect((await repo.findOneByOrFail({ id: saved.id })).id).toBe(saved.id);
        expect(new Set((await repo.find()).map((row) => row.id)).size).toBe(4);
      } finally {
        await app.close();
      }
    });

    it('fails the bootstrap, naming entity and property, with a layout wider than 53 bits', async () => {
      const Counter = counterEntity();
      const boot = bootApp([
        {
          type: 'better-sqlite3',
          database: files.path(`${uniqueSuffix()}.db`),
          entities: [Counter],
          synchronize: true,
        },
      ]);
      await expect(boot).rejects.toThrow(GeneratedIdTypeError);
      await expect(boot).rejects.toThrow(/Counter\.id: .*63 bits.*'js-safe'/);
    });
  });
});

describe('reading IDs back (the transformer)', () => {
  it('converts what drivers return to the declared type', () => {
    const asString = generatedIdTransformer('E.id', 'string');
    const asBigint = generatedIdTransformer('E.id', 'bigint');
    const asNumber = generatedIdTransformer('E.id', 'number');
    expect(asString.from(9007199254740993n)).toBe('9007199254740993');
    expect(asString.from('9007199254740993')).toBe('9007199254740993');
    expect(asString.from(42)).toBe('42');
    expect(asBigint.from('9007199254740993')).toBe(9007199254740993n);
    expect(asBigint.from(42)).toBe(42n);
    expect(asNumber.from('42')).toBe(42);
    expect(asNumber.from(42n)).toBe(42);
    expect(asString.from(null)).toBeNull();
    expect(asBigint.to(5n)).toBe(5n);
  });

  it('refuses a number that may have been rounded, naming the property and the fix', () => {
    for (const jsType of ['string', 'bigint', 'number'] as const) {
      const transformer = generatedIdTransformer('Order.id', jsType);
      expect(() => transformer.from(9007199254740992)).toThrow(IdPrecisionLossError);
      expect(() => transformer.from(9007199254740992)).toThrow(/Reading Order\.id .*safeIntegerDriver/);
    }
    expect(() => generatedIdTransformer('Order.id', 'number').from('9007199254740993')).toThrow(IdPrecisionLossError);
  });
});

describe('attachGeneratedIds()', () => {
  // Found by a review: `{ type: 'double' }` stored twenty issued IDs as three values on SQLite.
  it("refuses a column type that cannot hold the layout's IDs on this database, and takes it where it can", async () => {
    @Entity(`sf_double_${uniqueSuffix()}`)
    class Rounded {
      @PrimaryGeneratedColumn()
      key!: number;

      @GeneratedId({ primary: false, unique: false, type: 'double' })
      id!: string;
    }
    const wide = sqlite([Rounded]);
    await wide.initialize();
    try {
      const attaching = attachGeneratedIds(wide, await startedIds({ workerId: 1, layout: 'twitter' }));
      await expect(attaching).rejects.toThrow(GeneratedIdTypeError);
      await expect(attachGeneratedIds(wide, started[0])).rejects.toThrow(
        /Rounded\.id: the column type "double" cannot hold every ID on better-sqlite3 \(integers up to 53 bits exactly\), and the layout's IDs have 63 bits/,
      );
    } finally {
      await wide.destroy();
    }
    // A double holds every ID of a layout of 53 bits exactly.
    const narrow = sqlite([Rounded]);
    await narrow.initialize();
    try {
      const ids = await startedIds({ workerId: 2, layout: 'js-safe' });
      const detach = await attachGeneratedIds(narrow, ids);
      await narrow.getRepository(Rounded).insert({});
      detach();
    } finally {
      await narrow.destroy();
    }
  });

  it('knows which types are narrow on which database', () => {
    expect(exactBitsOf('integer', 'better-sqlite3')).toBeUndefined();
    expect(exactBitsOf('integer', 'postgres')).toBe(32);
    expect(exactBitsOf('Number', 'mysql')).toBe(32);
    expect(exactBitsOf('float', 'mysql')).toBe(24);
    expect(exactBitsOf('float', 'postgres')).toBe(53);
    expect(exactBitsOf('real', 'sqlite')).toBe(53);
    expect(exactBitsOf('real', 'postgres')).toBe(24);
    expect(exactBitsOf('bigint', 'postgres')).toBeUndefined();
  });

  function itemEntity() {
    @Entity(`sf_item_${uniqueSuffix()}`)
    class Item {
      @GeneratedId()
      id!: bigint;

      @Column({ type: 'int' })
      n!: number;
    }
    return Item;
  }

  it('refuses a DataSource that is not initialised', async () => {
    await expect(attachGeneratedIds(sqlite([itemEntity()]), await startedIds(), { name: 'late' })).rejects.toThrow(
      DataSourceNotInitializedError,
    );
  });

  it('attaches once, and detaching stops the filling', async () => {
    const Item = itemEntity();
    const ds = await sqlite([Item]).initialize();
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    const detach = await attachGeneratedIds(ds, await startedIds(), { name: 'scripts', logger });
    await attachGeneratedIds(ds, await startedIds({ workerId: 2 }), { name: 'scripts', logger });
    expect(warnings).toEqual([expect.stringMatching(/"scripts" already fills @GeneratedId\(\) columns/)]);
    const first = { n: 1 };
    await ds.getRepository(Item).insert(first);
    expect(new IdService({ workerId: 9 }).decode((first as { id?: bigint }).id!).workerId).toBe(1);
    detach();
    await expect(ds.getRepository(Item).insert({ n: 2 })).rejects.toThrow(GeneratedIdNotFilledError);
    await ds.destroy();
  });

  it('leaves a DataSource without @GeneratedId() entities alone', async () => {
    @Entity(`sf_plain_${uniqueSuffix()}`)
    class Plain {
      @PrimaryGeneratedColumn()
      id!: number;
    }
    const ds = await sqlite([Plain]).initialize();
    const warnings: string[] = [];
    await attachGeneratedIds(ds, await startedIds(), { logger: { warn: (message) => warnings.push(message) } });
    expect(ds.subscribers).toEqual([]);
    expect(warnings).toEqual([]);
    await ds.getRepository(Plain).insert({});
    expect(await ds.getRepository(Plain).count()).toBe(1);
    await ds.destroy();
  });

  it('waits for the next time unit when the sequence runs out, instead of failing the insert', async () => {
    const Item = itemEntity();
    const ds = await sqlite([Item]).initialize();
    // Two IDs per 10 ms and no synchronous wait: 40 rows need the asynchronous path about 20 times.
    const ids = await startedIds({ workerId: 1, layout: { timeUnitMs: 10, sequenceBits: 1 }, maxSyncWaitMs: 0 });
    await attachGeneratedIds(ds, ids);
    const rows = Array.from({ length: 40 }, (_, n) => ({ n }));
    await ds.getRepository(Item).insert(rows);
    const written = rows.map((row) => (row as { id?: bigint }).id!);
    expect(new Set(written).size).toBe(40);
    expect(await ds.getRepository(Item).count()).toBe(40);
    await ds.destroy();
  });

  it('warns that defaultSafeIntegers breaks TypeORM schema sync on SQLite, which safeIntegerDriver avoids', async () => {
    @Entity(`sf_profile_${uniqueSuffix()}`)
    class Profile {
      @GeneratedId()
      id!: bigint;

      @Column({ type: 'varchar', nullable: true })
      nickname!: string | null;

      @Column({ type: 'varchar', unique: true })
      email!: string;
    }
    const plain = await sqlite([Profile], {
      prepareDatabase: (db: Database.Database) => void db.defaultSafeIntegers(true),
    }).initialize();
    const fixed = await sqlite([Profile]).initialize();
    const warnings: string[] = [];
    const logger = { warn: (message: string) => warnings.push(message) };
    // One generator for both DataSources: a second one on the same worker ID would be refused.
    const ids = await startedIds();
    await attachGeneratedIds(plain, ids, { name: 'plain', logger });
    await attachGeneratedIds(fixed, ids, { name: 'fixed', logger });
    expect(warnings).toEqual([expect.stringMatching(/"plain" returns PRAGMA results as bigints.*safeIntegerDriver/)]);
    // The reason: right after synchronize, the schema reader already finds differences with defaultSafeIntegers.
    expect((await plain.driver.createSchemaBuilder().log()).upQueries.length).toBeGreaterThan(0);
    expect((await fixed.driver.createSchemaBuilder().log()).upQueries).toEqual([]);
    await plain.destroy();
    await fixed.destroy();
  });

  it('is done by SnowflakeTypeOrmModule for every DataSource, and a DataSource left uninitialised is reported', async () => {
    const Item = itemEntity();
    const logger = new RecordingLogger();
    const app = await bootApp(
      [
        {
          type: 'better-sqlite3',
          database: files.path(`${uniqueSuffix()}.db`),
          entities: [Item],
          synchronize: true,
          driver: safeIntegerDriver(Database),
        },
        {
          name: 'later',
          type: 'better-sqlite3',
          database: files.path(`${uniqueSuffix()}.db`),
          entities: [Item],
          manualInitialization: true,
        },
      ],
      { workerId: 1 },
      logger,
    );
    const ds = app.get(DataSource);
    const attached = ds.subscribers.length;
    await app.close();
    expect(logger.warnings).toEqual([expect.stringMatching(/DataSource "later" is not initialised/)]);
    expect(attached).toBe(1);
    expect(ds.subscribers).toHaveLength(0);
  });
});
