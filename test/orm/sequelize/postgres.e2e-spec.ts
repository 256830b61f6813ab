import pg from 'pg';
import { Sequelize } from 'sequelize';
import { snowflakeIdHooks, type SnowflakeIdSource } from '../../../lib/sequelize.js';
import { describeWhenReachable, POSTGRES, postgresReachable, uniqueSuffix } from '../../support/databases.js';
import { boundedWaitCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';
import { itemTable } from './item.model.js';

/** `rounding` installs pg's global int8 parser as `Number`, what apps do to get numbers, and puts it back at close. */
async function open(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const table = `sf_sequelize_${uniqueSuffix()}`;
  const int8 = pg.types.getTypeParser(20);
  if (rounding) pg.types.setTypeParser(20, Number);
  const sequelize = new Sequelize({
    dialect: 'postgres',
    host: POSTGRES.host,
    port: POSTGRES.port,
    username: POSTGRES.username,
    database: POSTGRES.database,
    logging: false,
    hooks: snowflakeIdHooks(ids),
  });
  await sequelize.query(
    `CREATE TABLE "${table}" (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title TEXT NOT NULL)`,
  );
  return itemTable(sequelize, table, async () => {
    await sequelize.query(`DROP TABLE "${table}"`);
    await sequelize.close();
    pg.types.setTypeParser(20, int8);
  });
}

const reachable = await postgresReachable();

describeWhenReachable(reachable, 'PostgreSQL', `${POSTGRES.host}:${POSTGRES.port}`, () => {
  describe('Sequelize snowflakeIdAttribute on PostgreSQL', () => {
    idColumnCases({
      open: (ids) => open(ids, false),
      openRounding: (ids) => open(ids, true),
      fix: /types\.setTypeParser\(20/,
    });
  });
  describe('Sequelize hooks during a worker-ID outage on PostgreSQL: bounded by maxAsyncWaitMs', () => {
    boundedWaitCases((ids) => open(ids, false));
  });
});
