import type { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IdService } from '../../../../lib/index.js';
import { GeneratedIdSubscriber } from '../../../../lib/orm/typeorm/generated-id.subscriber.js';
import { bootApp, RecordingLogger } from './app.js';
import { defineEntities, type Entities } from './entities.js';
import { uniqueSuffix } from '../../../support/databases.js';

const NAMED = 'analytics';
const UNSAFE = 2n ** 53n;

export interface SuiteTarget {
  /** Options of the default and of the named DataSource, without entities. */
  dataSources(): { default: TypeOrmModuleOptions; named: TypeOrmModuleOptions };
  /** Runs after the tables are dropped and the app closed. */
  cleanup?(): void;
  /** The warnings attaching is expected to log for these DataSources, in order. @default none */
  expectedWarnings?: RegExp[];
}

/**
 * The @GeneratedId() behaviour every database must show, against a real Nest app with a default and a named
 * DataSource and SnowflakeModule.forRoot({ workerId: 1 }).
 */
export function generatedIdSuite(target: SuiteTarget): void {
  let app: INestApplicationContext;
  let ds: DataSource;
  let named: DataSource;
  let ids: IdService;
  let e: Entities;
  const logger = new RecordingLogger();

  /** Counts rows whose column equals `id` written as an SQL integer literal: proof the database holds it exactly. */
  async function countExact(source: DataSource, table: string, column: string, id: bigint | string): Promise<number> {
    const rows: Array<Record<string, unknown>> = await source.query(
      `SELECT COUNT(*) AS c FROM ${source.driver.escape(table)} WHERE ${source.driver.escape(column)} = ${BigInt(id)}`,
    );
    return Number(Object.values(rows[0])[0]);
  }

  beforeAll(async () => {
    e = defineEntities(uniqueSuffix());
    const options = target.dataSources();
    app = await bootApp(
      [
        { ...options.default, entities: e.defaultEntities, synchronize: true },
        { ...options.named, name: NAMED, entities: e.namedEntities, synchronize: true },
      ] as TypeOrmModuleOptions[],
      { workerId: 1 },
      logger,
    );
    ds = app.get(DataSource);
    named = app.get<DataSource>(getDataSourceToken(NAMED));
    ids = app.get(IdService);
  });

  afterAll(async () => {
    try {
      if (app !== undefined) {
        for (const table of e.defaultTables) await ds.query(`DROP TABLE IF EXISTS ${ds.driver.escape(table)}`);
        for (const table of e.namedTables) await named.query(`DROP TABLE IF EXISTS ${named.driver.escape(table)}`);
        await app.close();
      }
    } finally {
      target.cleanup?.();
    }
  });

  it('records the declared property types SWC and tsc emit: String and BigInt', () => {
    expect(Reflect.getMetadata('design:type', e.Author.prototype, 'id')).toBe(String);
    expect(Reflect.getMetadata('design:type', e.Book.prototype, 'id')).toBe(BigInt);
  });

  it('save() fills a string ID that reads back equal and is stored exactly', async () => {
    const repo = ds.getRepository(e.Author);
    const author = await repo.save(repo.create({ name: 'Ada' }));
    expect(typeof author.id).toBe('string');
    expect(BigInt(author.id)).toBeGreaterThan(UNSAFE);
    const found = await repo.findOneByOrFail({ id: author.id });
    expect(found.id).toBe(author.id);
    expect(await countExact(ds, repo.metadata.tableName, 'id', author.id)).toBe(1);
  });

  it('save() fills a bigint ID for a bigint property, read back as the same bigint', async () => {
    const author = await ds.getRepository(e.Author).save({ name: 'Grace' });
    const book = await ds.getRepository(e.Book).save(ds.getRepository(e.Book).create({ title: 'Notes', author }));
    expect(typeof book.id).toBe('bigint');
    const found = await ds.getRepository(e.Book).findOneOrFail({ where: { id: book.id }, relations: { author: true } });
    expect(found.id).toBe(book.id);
    expect(found.author.id).toBe(author.id);
    expect(await countExact(ds, ds.getRepository(e.Book).metadata.tableName, 'id', book.id)).toBe(1);
  });

  it('insert() fills IDs of a plain object and of an array of them', async () => {
    const repo = ds.getRepository(e.Author);
    const one: Partial<InstanceType<Entities['Author']>> = { name: 'Insert one' };
    const many: Array<Partial<InstanceType<Entities['Author']>>> = [{ name: 'Insert two' }, { name: 'Insert three' }];
    await repo.insert(one);
    await repo.insert(many);
    for (const row of [one, ...many]) {
      expect(row.id).toMatch(/^\d+$/);
      expect((await repo.findOneByOrFail({ id: row.id! })).name).toBe(row.name);
    }
    expect(new Set([one, ...many].map((row) => row.id)).size).toBe(3);
  });

  it('query-builder inserts fill IDs', async () => {
    const values = [{ title: 'QB one' }, { title: 'QB two' }];
    const author = await ds.getRepository(e.Author).save({ name: 'QB author' });
    await ds
      .createQueryBuilder()
      .insert()
      .into(e.Book)
      .values(values.map((value) => ({ ...value, author })))
      .execute();
    const books = await ds.getRepository(e.Book).find({ where: { author: { id: author.id } }, order: { id: 'ASC' } });
    expect(books.map((book) => book.title)).toEqual(['QB one', 'QB two']);
    expect(books.every((book) => typeof book.id === 'bigint' && book.id > UNSAFE)).toBe(true);
    expect(books[0].id).not.toBe(books[1].id);
  });

  it('gives 100 rows of one insert 100 distinct, increasing IDs (no default evaluated once)', async () => {
    const rows = Array.from({ length: 100 }, (_, n) => ({ batch: 100, n }));
    await ds.getRepository(e.Row).insert(rows);
    const written = rows.map((row) => (row as { id?: bigint }).id!);
    expect(new Set(written).size).toBe(100);
    for (let i = 1; i < written.length; i++) expect(written[i] > written[i - 1]).toBe(true);
    const stored = await ds.getRepository(e.Row).find({ where: { batch: 100 }, order: { n: 'ASC' } });
    expect(stored.map((row) => row.id)).toEqual(written);
  });

  it('fills 10,000 rows of one bulk insert(), each its own ID', async () => {
    const rows = Array.from({ length: 10_000 }, (_, n) => ({ batch: 10_000, n }));
    await ds.getRepository(e.Row).insert(rows);
    const table = ds.driver.escape(ds.getRepository(e.Row).metadata.tableName);
    const [counts] = await ds.query<Array<Record<string, unknown>>>(
      `SELECT COUNT(*) AS total, COUNT(DISTINCT id) AS ids FROM ${table} WHERE batch = 10000`,
    );
    expect(Number(counts.total)).toBe(10_000);
    expect(Number(counts.ids)).toBe(10_000);
    const stored = await ds.getRepository(e.Row).find({ where: { batch: 10_000 }, order: { n: 'ASC' } });
    expect(stored.map((row) => row.id)).toEqual(rows.map((row) => (row as { id?: bigint }).id));
  });

  it('fills 10,000 rows of one bulk save(), each its own ID', async () => {
    const repo = ds.getRepository(e.Row);
    const rows = Array.from({ length: 10_000 }, (_, n) => repo.create({ batch: 20_000, n }));
    await repo.save(rows, { chunk: 2_000 });
    expect(new Set(rows.map((row) => row.id)).size).toBe(10_000);
    expect(await repo.countBy({ batch: 20_000 })).toBe(10_000);
  });

  it('fills cascaded relations before the parent row, so foreign keys hold the new IDs', async () => {
    const repo = ds.getRepository(e.Author);
    const author = repo.create({
      name: 'Cascade',
      books: [
        ds.getRepository(e.Book).create({ title: 'First' }),
        ds.getRepository(e.Book).create({ title: 'Second' }),
      ],
    });
    await repo.save(author);
    expect(author.books.every((book) => typeof book.id === 'bigint')).toBe(true);
    const found = await repo.findOneOrFail({ where: { id: author.id }, relations: { books: true } });
    expect(found.books.map((book) => book.id).sort()).toEqual(author.books.map((book) => book.id).sort());
    const bookTable = ds.getRepository(e.Book).metadata.tableName;
    expect(await countExact(ds, bookTable, 'authorId', author.id)).toBe(2);
  });

  it('keeps an ID the caller set, and updates through save() without a new row or a new ID', async () => {
    const repo = ds.getRepository(e.Author);
    const id = ids.nextString();
    const author = await repo.save(repo.create({ id, name: 'Given' }));
    expect(author.id).toBe(id);
    author.name = 'Renamed';
    await repo.save(author);
    expect(author.id).toBe(id);
    expect(await repo.countBy({ id })).toBe(1);
    expect((await repo.findOneByOrFail({ id })).name).toBe('Renamed');
    await repo.remove(author);
    expect(await repo.countBy({ id })).toBe(0);
  });

  it('fills a renamed primary column and a non-primary ID column, each with its own ID', async () => {
    const repo = ds.getRepository(e.Event);
    const event = await repo.save(repo.create({ kind: 'signup' }));
    expect(typeof event.id).toBe('bigint');
    expect(typeof event.publicId).toBe('string');
    expect(BigInt(event.publicId)).not.toBe(event.id);
    const table = repo.metadata.tableName;
    expect(await countExact(ds, table, 'event_id', event.id)).toBe(1);
    expect(await countExact(ds, table, 'public_id', event.publicId)).toBe(1);
    expect(await repo.findOneByOrFail({ publicId: event.publicId })).toEqual(event);
  });

  it('stores IDs in another column type (varchar) and reads them back equal', async () => {
    const repo = ds.getRepository(e.Note);
    const note = await repo.save(repo.create({ text: 'hello' }));
    expect(note.id).toMatch(/^\d+$/);
    expect((await repo.findOneByOrFail({ id: note.id })).text).toBe('hello');
  });

  it('fills IDs inside a transaction through the EntityManager', async () => {
    const saved = await ds.transaction((manager) =>
      manager.save(manager.create(e.Author, { name: 'In a transaction' })),
    );
    expect(saved.id).toMatch(/^\d+$/);
    expect(await ds.getRepository(e.Author).countBy({ id: saved.id })).toBe(1);
  });

  it('fills IDs on the named DataSource too', async () => {
    const repo = named.getRepository(e.Measurement);
    const measurement = await repo.save(repo.create({ value: 7 }));
    expect(measurement.id).toMatch(/^\d+$/);
    // Number(): with SQLite's plain defaultSafeIntegers(true) an `int` column comes back as a bigint.
    expect(Number((await repo.findOneByOrFail({ id: measurement.id })).value)).toBe(7);
    expect(await countExact(named, repo.metadata.tableName, 'id', measurement.id)).toBe(1);
  });

  it('issues IDs that decode to the app worker', async () => {
    const author = await ds.getRepository(e.Author).save({ name: 'Decode' });
    const parts = ids.decode(author.id);
    expect(parts.workerId).toBe(1);
    expect(Math.abs(parts.timestamp - Date.now())).toBeLessThan(60_000);
  });

  it('attaches exactly one subscriber to each DataSource, with no errors and no warnings but the expected ones', () => {
    // One each: a second would fill IDs twice, none would leave them to the database.
    for (const source of [ds, named]) {
      expect(source.subscribers.filter((subscriber) => subscriber instanceof GeneratedIdSubscriber)).toHaveLength(1);
    }
    expect(logger.errors).toEqual([]);
    // Above all no precision warning: the probe proved both drivers return 64-bit integers exactly.
    expect(logger.warnings).toEqual((target.expectedWarnings ?? []).map((warning) => expect.stringMatching(warning)));
  });
}
