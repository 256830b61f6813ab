import { BetterSqliteDriver, MikroORM } from '@mikro-orm/better-sqlite';
import { snowflakeIdSubscriber, type SnowflakeIdSource } from '../../../lib/mikro-orm.js';
import { sqliteDirectory } from '../../support/databases.js';
import { boundedWaitCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';
import { itemSchema, itemTable } from './item.schema.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

let count = 0;

/** `exact`: better-sqlite3 with safe integers (through knex's connection options), as the type's error advises. */
async function open(ids: SnowflakeIdSource, exact: boolean): Promise<ItemTable> {
  const { Item, schema } = itemSchema('items');
  const orm = await MikroORM.init({
    driver: BetterSqliteDriver,
    dbName: files.path(`mikro-${(count += 1)}.db`),
    entities: [schema],
    subscribers: [snowflakeIdSubscriber(ids)],
    driverOptions: exact ? { connection: { options: { safeIntegers: true } } } : {},
    allowGlobalContext: true,
  });
  await orm.em
    .getConnection()
    .execute('CREATE TABLE items (id INTEGER PRIMARY KEY, ref INTEGER NOT NULL UNIQUE, title TEXT NOT NULL)');
  return itemTable(orm, Item, () => orm.close());
}

describe('MikroORM SnowflakeIdType on SQLite (better-sqlite, files under the OS temp dir)', () => {
  idColumnCases({
    open: (ids) => open(ids, true),
    openRounding: (ids) => open(ids, false),
    fix: /safeIntegers: true/,
  });
});

describe('MikroORM subscriber during a worker-ID outage on SQLite: bounded by maxAsyncWaitMs', () => {
  boundedWaitCases((ids) => open(ids, true));
});
