import { MikroORM, PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import { snowflakeIdSubscriber, type SnowflakeIdSource } from '../../../lib/mikro-orm.js';
import { describeWhenReachable, POSTGRES, postgresReachable, uniqueSuffix } from '../../support/databases.js';
import { boundedWaitCases } from '../bounded-wait.cases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';
import { itemSchema, itemTable } from './item.schema.js';

/**
 * `rounding` installs pg's global int8 parser as `Number`, what apps do to get numbers, and puts it back at close.
 */
async function open(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const table = `sf_mikro_${uniqueSuffix()}`;
  const { Item, schema } = itemSchema(table);
  const int8 = pg.types.getTypeParser(20);
  if (rounding) pg.types.setTypeParser(20, Number);
  const orm = await MikroORM.init({
    driver: PostgreSqlDriver,
    host: POSTGRES.host,
    port: POSTGRES.port,
    user: POSTGRES.username,
    dbName: POSTGRES.database,
    entities: [schema],
    subscribers: [snowflakeIdSubscriber(ids)],
    allowGlobalContext: true,
  });
  const connection = orm.em.getConnection();
  await connection.execute(
    `CREATE TABLE "${table}" (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title TEXT NOT NULL)`,
  );
  return itemTable(orm, Item, async () => {
    await connection.execute(`DROP TABLE "${table}"`);
    await orm.close();
    pg.types.setTypeParser(20, int8);
  });
}

const reachable = await postgresReachable();

describeWhenReachable(reachable, 'PostgreSQL', `${POSTGRES.host}:${POSTGRES.port}`, () => {
  describe('MikroORM SnowflakeIdType on PostgreSQL', () => {
    idColumnCases({
      open: (ids) => open(ids, false),
      openRounding: (ids) => open(ids, true),
      fix: /types\.setTypeParser\(20/,
    });
  });
  describe('MikroORM subscriber during a worker-ID outage on PostgreSQL: bounded by maxAsyncWaitMs', () => {
    boundedWaitCases((ids) => open(ids, false));
  });
});
