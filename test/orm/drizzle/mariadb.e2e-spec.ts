import { asc, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/mysql2';
import { mysqlTable, varchar } from 'drizzle-orm/mysql-core';
import mysql from 'mysql2/promise';
import { mysqlSnowflakeId, type SnowflakeIdSource } from '../../../lib/drizzle.js';
import { describeWhenReachable, MARIADB, mariadbReachable, uniqueSuffix } from '../../support/databases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';

/** The table on a pool of its own; without `bigNumberStrings`, mysql2 returns BIGINT values as JS numbers. */
async function itemTable(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const name = `sf_drizzle_${uniqueSuffix()}`;
  const pool = mysql.createPool({
    host: MARIADB.host,
    port: MARIADB.port,
    user: MARIADB.username,
    password: MARIADB.password,
    database: MARIADB.database,
    ...(rounding ? {} : { supportBigNumbers: true, bigNumberStrings: true }),
  });
  await pool.query(
    `CREATE TABLE \`${name}\` (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title VARCHAR(20) NOT NULL)`,
  );
  const items = mysqlTable(name, {
    id: mysqlSnowflakeId('id', ids).primaryKey(),
    ref: mysqlSnowflakeId('ref', ids, { mode: 'string' }).notNull().unique(),
    title: varchar('title', { length: 20 }).notNull(),
  });
  const db = drizzle({ client: pool });
  return {
    insertTitles: async (titles) => void (await db.insert(items).values(titles.map((title) => ({ title })))),
    insertRows: async (rows) => void (await db.insert(items).values(rows)),
    all: async () => db.select().from(items).orderBy(asc(items.title)),
    byId: async (id) => db.select().from(items).where(eq(items.id, id)),
    byRef: async (ref) => db.select().from(items).where(eq(items.ref, ref)),
    close: async () => {
      await pool.query(`DROP TABLE \`${name}\``);
      await pool.end();
    },
  };
}

const reachable = await mariadbReachable();

describeWhenReachable(reachable, 'MariaDB', `${MARIADB.host}:${MARIADB.port}`, () => {
  describe('Drizzle snowflake columns on MariaDB (mysql2)', () => {
    idColumnCases({
      open: (ids) => itemTable(ids, false),
      openRounding: (ids) => itemTable(ids, true),
      fix: /Reading column "(id|ref)".*bigNumberStrings: true/,
    });
  });
});
