/**
 * exactSqliteDialect() as Sequelize 6 uses it, on real SQLite files: what it reads back, what it binds, and the parts
 * of node-sqlite3's behaviour Sequelize relies on (transactions on their own connections, `lastID` of bulk inserts,
 * numbers from COUNT and PRAGMA). node-sqlite3 itself is not installed here; `roundingSqliteDialect()` returns plain
 * numbers as it does, which is what the comparisons below are made against.
 */
import { createRequire } from 'node:module';
import { DataTypes, Op, QueryTypes, TimeoutError, UniqueConstraintError, type Sequelize } from 'sequelize';
import { SnowflakeConfigError } from '../../../lib/index.js';
import { loadBetterSqlite3 } from '../../../lib/orm/sequelize/exact-sqlite.dialect.js';
import { exactSqliteDialect, snowflakeIdAttribute, type SnowflakeIdSource } from '../../../lib/sequelize.js';
import { sqliteDirectory } from '../../support/databases.js';
import { sqliteSequelize } from './sqlite.harness.js';

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const files = sqliteDirectory();
afterAll(() => files.remove());

let count = 0;
const nextFile = () => files.path(`dialect-${(count += 1)}.db`);

/** IDs counting up from `start`. */
function countingIds(start: bigint): SnowflakeIdSource {
  let next = start;
  return { next: () => next++ };
}

/** A snowflake-keyed model and an auto-increment one, created by `sync()`. */
async function models(sequelize: Sequelize) {
  const Post = sequelize.define(
    'posts',
    { id: snowflakeIdAttribute('id'), title: { type: DataTypes.STRING, allowNull: false } },
    { timestamps: false },
  );
  const Tag = sequelize.define('tags', { name: DataTypes.STRING }, { timestamps: false });
  await sequelize.sync();
  return { Post, Tag };
}

/** The part of a connection of the dialect module that the binding case calls, as node-sqlite3 declares it. */
interface SqliteConnection {
  get(sql: string, parameters: object, callback: (error: Error | null, row: unknown) => void): void;
}

const INTEGERS = [MAX_INT64, MIN_INT64, SAFE + 2n, SAFE + 1n, SAFE, -SAFE, 0n];

/** Writes INTEGERS as literals into a BIGINT column and reads them back by a raw SELECT, in the same order. */
async function readIntegers(sequelize: Sequelize): Promise<unknown[]> {
  await sequelize.query('CREATE TABLE numbers (position INTEGER NOT NULL, value BIGINT NOT NULL)');
  await sequelize.query(
    `INSERT INTO numbers (position, value) VALUES ${INTEGERS.map((value, index) => `(${index}, ${value})`).join(', ')}`,
  );
  const rows = await sequelize.query<{ value: unknown }>('SELECT value FROM numbers ORDER BY position', {
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => row.value);
}

describe('exactSqliteDialect() under Sequelize 6', () => {
  it('reads every 64-bit integer exactly: a number when safe, the decimal string beyond', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(1n));
    try {
      expect(await readIntegers(sequelize)).toEqual([
        '9223372036854775807',
        '-9223372036854775808',
        '9007199254740993',
        '9007199254740992',
        Number.MAX_SAFE_INTEGER,
        -Number.MAX_SAFE_INTEGER,
        0,
      ]);
    } finally {
      await sequelize.close();
    }
  });

  it('is what the test above needs: the same reads without safe integers (as node-sqlite3 returns them) round', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(1n), { rounding: true });
    try {
      const values = await readIntegers(sequelize);
      expect(values.slice(0, 4)).toEqual([2 ** 63, -(2 ** 63), 2 ** 53, 2 ** 53]);
      expect(values[2]).toBe(values[3]);
    } finally {
      await sequelize.close();
    }
  });

  it('binds bigints exactly and safe integers and booleans as INTEGER, as node-sqlite3 does below 2^31', async () => {
    const { Database } = exactSqliteDialect();
    const database = await new Promise<SqliteConnection>((resolve, reject) => {
      const opened = new Database(':memory:', undefined, (error) =>
        error === null ? resolve(opened as SqliteConnection) : reject(error),
      );
    });
    const row = await new Promise<unknown>((resolve, reject) =>
      database.get(
        'SELECT $big AS big, typeof($big) AS bigType, typeof($int) AS intType, typeof($real) AS realType, ' +
          'typeof($flag) AS flagType, typeof($missing) AS missingType',
        { $big: MAX_INT64, $int: 2 ** 40, $real: 1.5, $flag: true, $missing: undefined },
        (error, result) => (error === null ? resolve(result) : reject(error)),
      ),
    );
    expect(row).toEqual({
      big: MAX_INT64.toString(),
      bigType: 'integer',
      intType: 'integer',
      realType: 'real',
      flagType: 'integer',
      missingType: 'null',
    });
  });

  it('counts as numbers, and keeps auto-increment keys of bulk inserts as numbers', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(MAX_INT64 - 10n));
    try {
      const { Post, Tag } = await models(sequelize);
      await Post.bulkCreate([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
      expect(await Post.count()).toBe(3);
      expect(await Post.count({ where: { id: { [Op.gt]: MAX_INT64 - 10n } } })).toBe(2);
      const tags = await Tag.bulkCreate([{ name: 'x' }, { name: 'y' }]);
      expect(tags.map((tag) => tag.get('id'))).toEqual([1, 2]);
      const described = await sequelize.getQueryInterface().describeTable('posts');
      expect(described.title.allowNull).toBe(false);
    } finally {
      await sequelize.close();
    }
  });

  it('finds bulk-inserted rows by their exact IDs, and none by a neighbour', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(MAX_INT64 - 3n));
    try {
      const { Post } = await models(sequelize);
      const created = await Post.bulkCreate([{ title: 'a' }, { title: 'b' }, { title: 'c' }]);
      expect(created.map((post) => post.get('id'))).toEqual([MAX_INT64 - 3n, MAX_INT64 - 2n, MAX_INT64 - 1n]);
      const found = await Post.findAll({ where: { id: MAX_INT64 - 2n } });
      expect(found.map((post) => [post.get('id'), post.get('title')])).toEqual([[MAX_INT64 - 2n, 'b']]);
      expect(await Post.findAll({ where: { id: MAX_INT64 } })).toEqual([]);
      const some = await Post.findAll({ where: { id: [MAX_INT64 - 3n, MAX_INT64 - 1n] }, order: [['title', 'ASC']] });
      expect(some.map((post) => post.get('title'))).toEqual(['a', 'c']);
    } finally {
      await sequelize.close();
    }
  });

  it('commits and rolls back transactions, each on a connection of its own', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(MAX_INT64 - 10n));
    try {
      const { Post } = await models(sequelize);
      await sequelize.transaction(async (transaction) => {
        await Post.create({ title: 'kept' }, { transaction });
      });
      const failing = sequelize.transaction(async (transaction) => {
        await Post.create({ title: 'rolled back' }, { transaction });
        expect(await Post.count({ transaction })).toBe(2);
        // The default connection does not see the open transaction's row.
        expect(await Post.count()).toBe(1);
        throw new Error('roll it back');
      });
      await expect(failing).rejects.toThrow('roll it back');
      const titles = (await Post.findAll()).map((post) => [post.get('id'), post.get('title')]);
      expect(titles).toEqual([[MAX_INT64 - 10n, 'kept']]);
    } finally {
      await sequelize.close();
    }
  });

  it('fails a write outside an open transaction at once with TimeoutError, where node-sqlite3 waits up to 1 s', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(1n));
    try {
      const { Post } = await models(sequelize);
      const transaction = await sequelize.transaction();
      await Post.create({ title: 'inside' }, { transaction });
      const started = performance.now();
      await expect(Post.create({ title: 'outside' })).rejects.toThrow(TimeoutError);
      // Waiting would block the only thread, on which the transaction's commit runs.
      expect(performance.now() - started).toBeLessThan(500);
      await transaction.commit();
      expect((await Post.findAll()).map((post) => post.get('title'))).toEqual(['inside']);
    } finally {
      await sequelize.close();
    }
  });

  it('reports a taken ID as UniqueConstraintError', async () => {
    const sequelize = sqliteSequelize(nextFile(), countingIds(MAX_INT64));
    try {
      const { Post } = await models(sequelize);
      await Post.create({ title: 'first' });
      await expect(Post.create({ id: MAX_INT64, title: 'again' })).rejects.toThrow(UniqueConstraintError);
    } finally {
      await sequelize.close();
    }
  });

  it('works on :memory:, where Sequelize keeps one connection', async () => {
    const sequelize = sqliteSequelize(':memory:', countingIds(MAX_INT64));
    try {
      const { Post } = await models(sequelize);
      await sequelize.transaction(async (transaction) => {
        await Post.create({ title: 'memory' }, { transaction });
      });
      const [post] = await Post.findAll();
      expect(post.get('id')).toBe(MAX_INT64);
    } finally {
      await sequelize.close();
    }
  });

  it('opens read-only with OPEN_READONLY in dialectOptions.mode, and refuses writes', async () => {
    const file = nextFile();
    const writer = sqliteSequelize(file, countingIds(1n));
    await models(writer);
    await writer.close();
    const { OPEN_READONLY } = exactSqliteDialect();
    const reader = sqliteSequelize(file, countingIds(1n), { dialectOptions: { mode: OPEN_READONLY } });
    try {
      const { Post } = await models(reader);
      expect(await Post.count()).toBe(0);
      await expect(Post.create({ title: 'no' })).rejects.toThrow(/readonly/);
    } finally {
      await reader.close();
    }
  });
});

describe('exactSqliteDialect() without better-sqlite3', () => {
  it('names the package to install', () => {
    // A require that resolves from the OS temp dir, where no node_modules holds better-sqlite3.
    const elsewhere = createRequire(files.path('nowhere.js'));
    expect(() => loadBetterSqlite3(elsewhere)).toThrow(SnowflakeConfigError);
    expect(() => loadBetterSqlite3(elsewhere)).toThrow('run `npm install better-sqlite3`');
  });
});
