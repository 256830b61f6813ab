import { asc, eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { pgTable, text } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { pgSnowflakeId, type SnowflakeIdSource } from '../../../lib/drizzle.js';
import { describeWhenReachable, POSTGRES, postgresReachable, uniqueSuffix } from '../../support/databases.js';
import { idColumnCases, type ItemTable } from '../id-column.cases.js';

const CONNECTION = {
  host: POSTGRES.host,
  port: POSTGRES.port,
  user: POSTGRES.username,
  database: POSTGRES.database,
};

/**
 * The table on a pool of its own. `rounding` installs pg's global int8 parser as `Number` (what apps do to get
 * numbers): Drizzle's node-postgres session passes per-query parsers that fall back to the global ones.
 */
async function itemTable(ids: SnowflakeIdSource, rounding: boolean): Promise<ItemTable> {
  const name = `sf_drizzle_${uniqueSuffix()}`;
  const int8 = pg.types.getTypeParser(20);
  if (rounding) pg.types.setTypeParser(20, Number);
  const pool = new pg.Pool(CONNECTION);
  await pool.query(`CREATE TABLE "${name}" (id BIGINT PRIMARY KEY, ref BIGINT NOT NULL UNIQUE, title TEXT NOT NULL)`);
  const items = pgTable(name, {
    id: pgSnowflakeId('id', ids).primaryKey(),
    ref: pgSnowflakeId('ref', ids, { mode: 'string' }).notNull().unique(),
    title: text('title').notNull(),
  });
  const db = drizzle({ client: pool });
  return {
    insertTitles: async (titles) => void (await db.insert(items).values(titles.map((title) => ({ title })))),
    insertRows: async (rows) => void (await db.insert(items).values(rows)),
    all: async () => db.select().from(items).orderBy(asc(items.title)),
    byId: async (id) => db.select().from(items).where(eq(items.id, id)),
    byRef: async (ref) => db.select().from(items).where(eq(items.ref, ref)),
    close: async () => {
      await pool.query(`DROP TABLE "${name}"`);
      await pool.end();
      pg.types.setTypeParser(20, int8);
    },
  };
}

const reachable = await postgresReachable();

describeWhenReachable(reachable, 'PostgreSQL', `${POSTGRES.host}:${POSTGRES.port}`, () => {
  describe('Drizzle snowflake columns on PostgreSQL (node-postgres)', () => {
    idColumnCases({
      open: (ids) => itemTable(ids, false),
      openRounding: (ids) => itemTable(ids, true),
      fix: /Reading column "(id|ref)".*parseInt8/,
    });
  });
});
