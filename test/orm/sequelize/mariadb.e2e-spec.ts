import { Sequelize } from 'sequelize';
import { snowflakeIdHooks, type SnowflakeIdSource } from '../../../lib/sequelize.js';
import { describeWhenReachable, MARIADB, mariadbReachable, uniqueSuffix } from '../../support/databases.js';
import { boundedWaitCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';
import { itemTable } from './item.model.js';

/**
 * Sequelize's MariaDB dialect sets `supportBigNumbers` (a number when safe, a string otherwise: the mixed types the
 * attribute evens out). `rounding` turns it off and asks the connector for numbers (`bigIntAsNumber`).
 */
async function open(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const table = `sf_sequelize_${uniqueSuffix()}`;
  const sequelize = new Sequelize({
    dialect: 'mariadb',
    host: MARIADB.host,
    port: MARIADB.port,
    username: MARIADB.username,
    password: MARIADB.password,
    database: MARIADB.database,
    logging: false,
    dialectOptions: rounding ? { supportBigNumbers: false, bigIntAsNumber: true } : {},
    hooks: snowflakeIdHooks(ids),
  });
  await sequelize.query(
    `CREATE TABLE \`${table}\` (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title VARCHAR(20) NOT NULL)`,
  );
  return itemTable(sequelize, table, async () => {
    await sequelize.query(`DROP TABLE \`${table}\``);
    await sequelize.close();
  });
}

const reachable = await mariadbReachable();

describeWhenReachable(reachable, 'MariaDB', `${MARIADB.host}:${MARIADB.port}`, () => {
  describe('Sequelize snowflakeIdAttribute on MariaDB', () => {
    idColumnCases({
      open: (ids) => open(ids, false),
      openRounding: (ids) => open(ids, true),
      fix: /bigIntAsNumber/,
    });
  });
  describe('Sequelize hooks during a worker-ID outage on MariaDB: bounded by maxAsyncWaitMs', () => {
    boundedWaitCases((ids) => open(ids, false));
  });
});
