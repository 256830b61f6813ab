/**
 * Drizzle, MikroORM and Sequelize bulk inserts: rows whose IDs the snowflake column fills (Drizzle's `$defaultFn`,
 * MikroORM's `beforeCreate` subscriber, Sequelize's `beforeBulkCreate` hook) against the same rows with IDs set by hand
 * (`ids.next()` while building them), in one run, on one SQLite file each (better-sqlite3 with exact integers, WAL,
 * synchronous=NORMAL; Sequelize through `exactSqliteDialect()`).
 *
 * Each round times one write of each side back to back, in alternating order, each after a minor garbage collection;
 * the overhead is the median of the rounds' paired ratios, and the ratio of the two sides' median times; the target
 * takes the larger (as typeorm.bench.ts does).
 *
 *   npm run build && npm run bench:build && node --expose-gc .bench/orm-columns.bench.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { EntitySchema, type Constructor, type Type } from '@mikro-orm/core';
import { BetterSqliteDriver, MikroORM } from '@mikro-orm/better-sqlite';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { IdService } from 'nestjs-snowflake';
import { safeIntegerDriver, sqliteSnowflakeId } from 'nestjs-snowflake/drizzle';
import { SnowflakeIdType, snowflakeIdSubscriber } from 'nestjs-snowflake/mikro-orm';
import { exactSqliteDialect, snowflakeIdAttribute, snowflakeIdHooks } from 'nestjs-snowflake/sequelize';
import { DataTypes, Sequelize } from 'sequelize';
import {
  type Bench,
  type BenchContext,
  type Log,
  formatPercent,
  markdownTable,
  median,
  settings as defaultSettings,
} from './harness.js';

type Side = 'generated' | 'manual';

/** One ORM's two sides: each call times one bulk write (rows built and written). */
interface Case {
  name: string;
  rows: number;
  generated: () => Promise<number>;
  manual: () => Promise<number>;
  /** Distinct IDs in the generated side's table after its last write. */
  count: () => unknown;
  close: () => Promise<unknown>;
}

const TARGET_OVERHEAD = 0.05;
const collectGarbageBeforeWrite = () => globalThis.gc?.({ type: 'minor' });

function openSqlite(file: string) {
  const database = new (safeIntegerDriver(Database))(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  return database;
}

/** Drizzle: one `insert().values(rows)` of `rows` rows into each side's table. */
function drizzleCase(dir: string, ids: IdService, rows: number): Case {
  const database = openSqlite(join(dir, 'drizzle.db'));
  database.exec('CREATE TABLE generated (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, label TEXT NOT NULL)');
  database.exec('CREATE TABLE manual (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, label TEXT NOT NULL)');
  const generated = sqliteTable('generated', {
    id: sqliteSnowflakeId('id', ids).primaryKey(),
    n: integer('n').notNull(),
    label: text('label').notNull(),
  });
  const manual = sqliteTable('manual', {
    id: integer('id', { mode: 'number' }).primaryKey(),
    n: integer('n').notNull(),
    label: text('label').notNull(),
  });
  const db = drizzle({ client: database });
  const build = (withId: boolean) =>
    Array.from({ length: rows }, (_, n) =>
      withId ? { id: ids.next(), n, label: `row ${n}` } : { n, label: `row ${n}` },
    );
  return {
    name: `Drizzle, ${rows.toLocaleString('en-US')} rows in one insert().values()`,
    rows,
    generated: async () => {
      database.exec('DELETE FROM generated');
      collectGarbageBeforeWrite();
      const start = performance.now();
      await db.insert(generated).values(build(false));
      return performance.now() - start;
    },
    manual: async () => {
      database.exec('DELETE FROM manual');
      collectGarbageBeforeWrite();
      const start = performance.now();
      // Drizzle's SQLite integer column types its values as numbers; better-sqlite3 binds these bigints exactly.
      await db.insert(manual).values(build(true) as unknown as (typeof manual.$inferInsert)[]);
      return performance.now() - start;
    },
    count: () => (database.prepare('SELECT COUNT(DISTINCT id) AS ids FROM generated').get() as { ids: bigint }).ids,
    close: () => Promise.resolve(database.close()),
  };
}

/** MikroORM: `rows` entities persisted and flushed in one unit of work. */
async function mikroCase(dir: string, ids: IdService, rows: number): Promise<Case> {
  class Generated {}
  class Manual {}
  const schema = (cls: Constructor<object>, table: string, idType: string | Constructor<Type<unknown>>) =>
    new EntitySchema({
      class: cls,
      tableName: table,
      properties: {
        id: { type: idType, primary: true, autoincrement: false },
        n: { type: 'integer' },
        label: { type: 'string' },
      },
    });
  const orm = await MikroORM.init({
    driver: BetterSqliteDriver,
    dbName: join(dir, 'mikro.db'),
    entities: [schema(Generated, 'generated', SnowflakeIdType), schema(Manual, 'manual', 'bigint')],
    subscribers: [snowflakeIdSubscriber(ids)],
    driverOptions: { connection: { options: { safeIntegers: true } } },
    allowGlobalContext: true,
  });
  const connection = orm.em.getConnection();
  await connection.execute('PRAGMA journal_mode = WAL');
  await connection.execute('PRAGMA synchronous = NORMAL');
  for (const table of ['generated', 'manual']) {
    await connection.execute(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, label TEXT NOT NULL)`);
  }
  const write = async (cls: Constructor<object>, table: string, withId: boolean) => {
    await connection.execute(`DELETE FROM ${table}`);
    collectGarbageBeforeWrite();
    const start = performance.now();
    const em = orm.em.fork();
    for (let n = 0; n < rows; n++) {
      em.persist(
        Object.assign(new cls(), withId ? { id: ids.next(), n, label: `row ${n}` } : { n, label: `row ${n}` }),
      );
    }
    await em.flush();
    return performance.now() - start;
  };
  return {
    name: `MikroORM, ${rows.toLocaleString('en-US')} entities in one flush`,
    rows,
    generated: () => write(Generated, 'generated', false),
    manual: () => write(Manual, 'manual', true),
    count: async () =>
      Number((await connection.execute<{ ids: bigint }[]>('SELECT COUNT(DISTINCT id) AS ids FROM generated'))[0].ids),
    close: () => orm.close(),
  };
}

/**
 * Sequelize: `rows` rows in one `bulkCreate()`. Both models declare the ID with `snowflakeIdAttribute`, so that both
 * sides read and bind it the same way; only the generated side's `beforeBulkCreate` hook fills it.
 */
async function sequelizeCase(dir: string, ids: IdService, rows: number): Promise<Case> {
  const sequelize = new Sequelize({
    dialect: 'sqlite',
    storage: join(dir, 'sequelize.db'),
    dialectModule: exactSqliteDialect(),
    logging: false,
    hooks: snowflakeIdHooks(ids),
  });
  await sequelize.query('PRAGMA journal_mode = WAL');
  await sequelize.query('PRAGMA synchronous = NORMAL');
  const define = (table: string) =>
    sequelize.define(
      table,
      {
        id: snowflakeIdAttribute('id'),
        n: { type: DataTypes.INTEGER, allowNull: false },
        label: { type: DataTypes.TEXT, allowNull: false },
      },
      { tableName: table, timestamps: false },
    );
  const Generated = define('generated');
  const Manual = define('manual');
  await sequelize.sync();
  const write = async (model: typeof Generated, withId: boolean) => {
    await model.destroy({ where: {}, truncate: true });
    collectGarbageBeforeWrite();
    const start = performance.now();
    await model.bulkCreate(
      Array.from({ length: rows }, (_, n) =>
        withId ? { id: ids.next(), n, label: `row ${n}` } : { n, label: `row ${n}` },
      ),
    );
    return performance.now() - start;
  };
  return {
    name: `Sequelize, ${rows.toLocaleString('en-US')} rows in one bulkCreate()`,
    rows,
    generated: () => write(Generated, false),
    manual: () => write(Manual, true),
    count: async () => {
      const [[row]] = (await sequelize.query('SELECT COUNT(DISTINCT id) AS ids FROM generated')) as [
        { ids: number }[],
        unknown,
      ];
      return row.ids;
    },
    close: () => sequelize.close(),
  };
}

/** Rounds of one write of each side, alternating which goes first, until the budget ends (at least `minRounds`). */
async function measure(
  testCase: Case,
  { minRounds, budgetMs, log }: { minRounds: number; budgetMs: number; log: Log },
) {
  for (let i = 0; i < 3; i++) {
    await testCase.generated();
    await testCase.manual();
  }
  const times: Record<Side, number[]> = { generated: [], manual: [] };
  const ratios: number[] = [];
  const deadline = performance.now() + budgetMs;
  do {
    const order: Side[] = ratios.length % 2 === 0 ? ['generated', 'manual'] : ['manual', 'generated'];
    const ms: Partial<Record<Side, number>> = {};
    for (const side of order) ms[side] = await testCase[side]();
    times.generated.push(ms.generated!);
    times.manual.push(ms.manual!);
    ratios.push(ms.generated! / ms.manual!);
  } while (ratios.length < minRounds || performance.now() < deadline);
  const distinct = Number(await testCase.count());
  if (distinct !== testCase.rows)
    throw new Error(`${testCase.name}: ${distinct} distinct IDs, expected ${testCase.rows}`);
  const generated = median(times.generated);
  const manual = median(times.manual);
  const result = {
    rounds: ratios.length,
    generated,
    manual,
    overhead: median(ratios) - 1,
    mediansOverhead: generated / manual - 1,
  };
  log(
    `  ${testCase.name}: ${result.rounds} rounds, by hand ${result.manual.toFixed(1)} ms, generated ` +
      `${result.generated.toFixed(1)} ms, overhead ${formatPercent(result.overhead)} (medians' ratio ` +
      `${formatPercent(result.mediansOverhead)})`,
  );
  return result;
}

const bench = {
  name: 'orm-columns',
  title: 'Drizzle, MikroORM and Sequelize: generated ID columns, bulk insert',
  async run({
    settings = defaultSettings,
    log = (line) => void process.stderr.write(`${line}\n`),
  }: Partial<BenchContext> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'snowflake-bench-orm-'));
    const ids = new IdService({ workerId: 1, workerLock: false });
    await ids.onModuleInit();
    const testCases = [
      drizzleCase(dir, ids, 10_000),
      await mikroCase(dir, ids, 2_000),
      await sequelizeCase(dir, ids, 2_000),
    ];
    try {
      const results: ({ testCase: Case } & Awaited<ReturnType<typeof measure>>)[] = [];
      for (const testCase of testCases) {
        results.push({
          testCase,
          ...(await measure(testCase, { minRounds: 11, budgetMs: settings.repeats * 5_000, log })),
        });
      }
      const sections = [
        'Rows (id bigint, n int, label text) into a SQLite file (better-sqlite3 with exact integers, WAL, ' +
          "synchronous=NORMAL); the timed part builds the rows and writes them. Overhead: the median of the rounds' " +
          "paired ratios, and the ratio of the two sides' median times; the target takes the larger.",
        markdownTable(
          [
            'rows, write',
            'rounds',
            'IDs by hand (ms)',
            'column fills them (ms)',
            "overhead (rounds' median)",
            "overhead (medians' ratio)",
          ],
          results.map((r) => [
            r.testCase.name,
            String(r.rounds),
            r.manual.toFixed(1),
            r.generated.toFixed(1),
            formatPercent(r.overhead),
            formatPercent(r.mediansOverhead),
          ]),
        ),
      ];
      const targets = results.map((r) => {
        const overhead = Math.max(r.overhead, r.mediansOverhead);
        return {
          name: `ID column overhead, ${r.testCase.name}`,
          measured: `${formatPercent(r.overhead)}; medians' ratio ${formatPercent(r.mediansOverhead)}`,
          goal: `≤ ${formatPercent(TARGET_OVERHEAD)}`,
          pass: overhead <= TARGET_OVERHEAD,
          verdict: overhead <= TARGET_OVERHEAD ? 'PASS' : 'MISS',
        };
      });
      return { sections, targets };
    } finally {
      for (const testCase of testCases) await testCase.close();
      await ids.onApplicationShutdown();
      rmSync(dir, { recursive: true, force: true });
    }
  },
} satisfies Bench;

export default bench;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { sections, targets } = await bench.run();
  process.stdout.write(`${sections.join('\n\n')}\n\n`);
  for (const target of targets) process.stdout.write(`${target.name}: ${target.measured} (${target.verdict})\n`);
}
