import type { SnowflakeIdSource } from '../../../lib/sequelize.js';
import { sqliteDirectory } from '../../support/databases.js';
import { boundedWaitCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';
import { itemTable } from './item.model.js';
import { sqliteSequelize } from './sqlite.harness.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

let count = 0;

/**
 * A table in a SQLite file of its own, through `exactSqliteDialect()`; `rounding` puts the same adapter over
 * better-sqlite3's plain numbers, as Sequelize's default sqlite3 driver returns them.
 */
async function open(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const sequelize = sqliteSequelize(files.path(`sequelize-${(count += 1)}.db`), ids, { rounding });
  await sequelize.query('CREATE TABLE items (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title TEXT NOT NULL)');
  return itemTable(sequelize, 'items', () => sequelize.close());
}

describe('Sequelize snowflakeIdAttribute on SQLite (exactSqliteDialect, files under the OS temp dir)', () => {
  idColumnCases({
    open: (ids) => open(ids, false),
    openRounding: (ids) => open(ids, true),
    fix: /dialectModule: exactSqliteDialect\(\)/,
  });
});

describe('Sequelize hooks during a worker-ID outage on SQLite: bounded by maxAsyncWaitMs', () => {
  boundedWaitCases((ids) => open(ids, false));
});
