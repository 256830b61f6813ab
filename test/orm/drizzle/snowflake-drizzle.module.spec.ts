import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { IdService, SnowflakeConfigError, SnowflakeModule, UnknownGeneratorError } from '../../../lib/index.js';
import {
  DrizzleIdsNotBoundError,
  IdServiceNotFoundError,
  safeIntegerDriver,
  SnowflakeDrizzleModule,
  snowflakeIdSlot,
  sqliteSnowflakeId,
  type SnowflakeIdSlot,
} from '../../../lib/drizzle.js';
import { bootModules } from '../typeorm/support/app.js';
import { sqliteDirectory } from '../../support/databases.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

let count = 0;

/** A notes table on a fresh SQLite file whose ID column takes IDs from `ids`. */
function notes(ids: SnowflakeIdSlot) {
  const database = new (safeIntegerDriver(Database))(files.path(`${(count += 1)}.db`));
  database.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  const table = sqliteTable('notes', { id: sqliteSnowflakeId('id', ids).primaryKey(), text: text('text').notNull() });
  const db = drizzle({ client: database });
  return {
    insert: (value: string) => db.insert(table).values({ text: value }).returning().get(),
    close: () => database.close(),
  };
}

const workerOf = (id: bigint) => new IdService({ workerId: 0 }).decode(id).workerId;

describe('SnowflakeDrizzleModule', () => {
  it('binds the slot to the app IdService while the app runs, and unbinds it at shutdown', async () => {
    const ids = snowflakeIdSlot();
    const table = notes(ids);
    await expect(async () => table.insert('before')).rejects.toThrow(DrizzleIdsNotBoundError);
    const app = await bootModules([
      SnowflakeModule.forRoot({ workerId: 3, workerLock: false }),
      SnowflakeDrizzleModule.forRoot({ ids }),
    ]);
    try {
      const note = table.insert('during');
      expect(typeof note.id).toBe('bigint');
      expect(workerOf(note.id)).toBe(3);
    } finally {
      await app.close();
    }
    expect(ids.bound).toBe(false);
    await expect(async () => table.insert('after')).rejects.toThrow(/import SnowflakeDrizzleModule\.forRoot/);
    table.close();
  });

  it('binds a slot of a named generator to that registration', async () => {
    const orders = snowflakeIdSlot({ generator: 'orders' });
    const table = notes(orders);
    const app = await bootModules([
      SnowflakeModule.forRoot({ workerId: 4, workerLock: false }),
      SnowflakeModule.forRoot({ name: 'orders', workerId: 6, workerLock: false }),
      SnowflakeDrizzleModule.forRoot({ ids: [orders] }),
    ]);
    try {
      expect(workerOf(table.insert('order').id)).toBe(6);
    } finally {
      await app.close();
      table.close();
    }
  });

  it('fails the bootstrap for a generator the app does not register, naming the ones it does', async () => {
    const boot = bootModules([
      SnowflakeModule.forRoot({ workerId: 7, workerLock: false }),
      SnowflakeDrizzleModule.forRoot({ ids: snowflakeIdSlot({ generator: 'billing' }) }),
    ]);
    await expect(boot).rejects.toThrow(UnknownGeneratorError);
    await expect(boot).rejects.toThrow(/"billing".*default/);
  });

  it('fails the bootstrap without SnowflakeModule, naming the import', async () => {
    const boot = bootModules([SnowflakeDrizzleModule.forRoot({ ids: snowflakeIdSlot() })]);
    await expect(boot).rejects.toThrow(IdServiceNotFoundError);
    await expect(boot).rejects.toThrow(/SnowflakeDrizzleModule found no IdService/);
  });

  it('refuses to bind one slot in a second app that runs at the same time', async () => {
    const ids = snowflakeIdSlot();
    const first = await bootModules([
      SnowflakeModule.forRoot({ workerId: 8, workerLock: false }),
      SnowflakeDrizzleModule.forRoot({ ids }),
    ]);
    try {
      const second = bootModules([
        SnowflakeModule.forRoot({ workerId: 9, workerLock: false }),
        SnowflakeDrizzleModule.forRoot({ ids }),
      ]);
      await expect(second).rejects.toThrow(SnowflakeConfigError);
      await expect(second).rejects.toThrow(/a slot \(and tables\) of its own/);
    } finally {
      await first.close();
    }
  });
});
