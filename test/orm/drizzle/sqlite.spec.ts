import Database from 'better-sqlite3';
import { asc, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { safeIntegerDriver, sqliteSnowflakeId, type SnowflakeIdSource } from '../../../lib/drizzle.js';
import { sqliteDirectory } from '../../support/databases.js';
import { synchronousHookOutageCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemRow, type ItemTable } from '../id-column.cases.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

let count = 0;

function itemTable(database: Database.Database, ids: SnowflakeIdSource): ItemTable {
  database.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, ref INTEGER NOT NULL UNIQUE, title TEXT NOT NULL)');
  const items = sqliteTable('items', {
    id: sqliteSnowflakeId('id', ids).primaryKey(),
    ref: sqliteSnowflakeId('ref', ids, { mode: 'string' }).notNull().unique(),
    title: text('title').notNull(),
  });
  const db = drizzle({ client: database });
  return {
    insertTitles: async (titles) => void (await db.insert(items).values(titles.map((title) => ({ title })))),
    insertRows: async (rows) => void (await db.insert(items).values(rows)),
    all: async () => (await db.select().from(items).orderBy(asc(items.title))) satisfies ItemRow[],
    byId: async (id) => db.select().from(items).where(eq(items.id, id)),
    byRef: async (ref) => db.select().from(items).where(eq(items.ref, ref)),
    close: async () => void database.close(),
  };
}

describe('Drizzle snowflake columns on SQLite (better-sqlite3, files under the OS temp dir)', () => {
  idColumnCases({
    open: async (ids) => itemTable(new (safeIntegerDriver(Database))(files.path(`${(count += 1)}.db`)), ids),
    openRounding: async (ids) => itemTable(new Database(files.path(`${(count += 1)}.db`)), ids),
    fix: /Reading column "(id|ref)".*safeIntegerDriver/,
  });
});

describe('Drizzle snowflake columns during a worker-ID outage on SQLite: $defaultFn cannot wait', () => {
  synchronousHookOutageCases(async (ids) =>
    itemTable(new (safeIntegerDriver(Database))(files.path(`${(count += 1)}.db`)), ids),
  );
});
