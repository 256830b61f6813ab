import Database from 'better-sqlite3';
import { Column, DataSource, Entity } from 'typeorm';
import { GeneratedId, safeIntegerDriver } from '../../../lib/typeorm.js';
import { bootApp } from './support/app.js';
import { sqliteDirectory } from '../../support/databases.js';
import { generatedIdSuite } from './support/generated-id.suite.js';

// The default DataSource uses safeIntegerDriver, the named one the plain `defaultSafeIntegers(true)`: both must
// read IDs back exactly.
describe('@GeneratedId() on SQLite (better-sqlite3, files under the OS temp dir)', () => {
  const files = sqliteDirectory();
  generatedIdSuite({
    dataSources: () => ({
      default: { type: 'better-sqlite3', database: files.path('default.db'), driver: safeIntegerDriver(Database) },
      named: {
        type: 'better-sqlite3',
        database: files.path('named.db'),
        prepareDatabase: (db: Database.Database) => void db.defaultSafeIntegers(true),
      },
    }),
    cleanup: () => files.remove(),
    // The plain defaultSafeIntegers(true) reads IDs exactly, but also PRAGMA results as bigints, which TypeORM's
    // schema reader misreads: the module says so.
    expectedWarnings: [/"analytics" returns PRAGMA results as bigints/],
  });
});

@Entity('counter_with_plain_numbers')
class Counter {
  @GeneratedId()
  id!: bigint;

  @Column({ type: 'int' })
  count!: number;

  @Column()
  plain!: number;

  // A bigint column without @GeneratedId(): TypeORM passes SQLite values through, so the driver's type shows.
  @Column({ type: 'bigint' })
  big!: bigint | number;
}

describe('safeIntegerDriver: exact where a number would round, numbers everywhere else', () => {
  const files = sqliteDirectory();
  afterAll(() => files.remove());

  it('reads int columns and counts as numbers, and 64-bit values above 2^53 as exact bigints', async () => {
    const app = await bootApp([
      {
        type: 'better-sqlite3',
        database: files.path('numbers.db'),
        driver: safeIntegerDriver(Database),
        entities: [Counter],
        synchronize: true,
      },
    ]);
    try {
      const repo = app.get(DataSource).getRepository(Counter);
      const saved = await repo.save(repo.create({ count: 41, plain: 7, big: 9007199254740993n }));
      const found = await repo.findOneByOrFail({ id: saved.id });
      expect(found.id).toBe(saved.id);
      expect(found.count).toBe(41);
      expect(found.plain).toBe(7);
      expect(found.big).toBe(9007199254740993n);
      expect(await repo.count()).toBe(1);
      const [row] = await app
        .get(DataSource)
        .query<Array<{ id: unknown; count: unknown }>>('SELECT id, count FROM counter_with_plain_numbers');
      expect(row.id).toBe(saved.id);
      expect(row.count).toBe(41);
    } finally {
      await app.close();
    }
  });

  it('keeps synchronize idempotent: a second start finds the schema unchanged', async () => {
    const options = {
      type: 'better-sqlite3' as const,
      database: files.path('sync.db'),
      driver: safeIntegerDriver(Database),
      entities: [Counter],
    };
    const first = await new DataSource({ ...options, synchronize: true }).initialize();
    await first.destroy();
    const second = await new DataSource(options).initialize();
    try {
      const pending = await second.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((query) => query.query)).toEqual([]);
    } finally {
      await second.destroy();
    }
  });
});
