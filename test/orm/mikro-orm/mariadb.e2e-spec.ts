import { MariaDbDriver, MikroORM } from '@mikro-orm/mariadb';
import { snowflakeIdSubscriber, type SnowflakeIdSource } from '../../../lib/mikro-orm.js';
import { describeWhenReachable, MARIADB, mariadbReachable, uniqueSuffix } from '../../support/databases.js';
import { boundedWaitCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';
import { itemSchema, itemTable } from './item.schema.js';

/**
 * `rounding`: the mariadb connector's `bigIntAsNumber`, which returns BIGINT values as JS numbers once MikroORM's
 * `supportBigNumbers` (numbers when safe, strings otherwise) is turned off.
 */
async function open(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const table = `sf_mikro_${uniqueSuffix()}`;
  const { Item, schema } = itemSchema(table);
  const orm = await MikroORM.init({
    driver: MariaDbDriver,
    host: MARIADB.host,
    port: MARIADB.port,
    user: MARIADB.username,
    password: MARIADB.password,
    dbName: MARIADB.database,
    entities: [schema],
    subscribers: [snowflakeIdSubscriber(ids)],
    driverOptions: rounding ? { connection: { supportBigNumbers: false, bigIntAsNumber: true } } : {},
    allowGlobalContext: true,
  });
  const connection = orm.em.getConnection();
  await connection.execute(
    `CREATE TABLE \`${table}\` (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title VARCHAR(20) NOT NULL)`,
  );
  return itemTable(orm, Item, async () => {
    await connection.execute(`DROP TABLE \`${table}\``);
    await orm.close();
  });
}

const reachable = await mariadbReachable();

describeWhenReachable(reachable, 'MariaDB', `${MARIADB.host}:${MARIADB.port}`, () => {
  describe('MikroORM SnowflakeIdType on MariaDB', () => {
    idColumnCases({
      open: (ids) => open(ids, false),
      openRounding: (ids) => open(ids, true),
      fix: /bigIntAsNumber/,
    });
  });
  describe('MikroORM subscriber during a worker-ID outage on MariaDB: bounded by maxAsyncWaitMs', () => {
    boundedWaitCases((ids) => open(ids, false));
  });
});
