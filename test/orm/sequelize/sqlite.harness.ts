import Database from 'better-sqlite3';
import { Sequelize, type Options } from 'sequelize';
import {
  exactSqliteDialect,
  snowflakeIdHooks,
  type ExactSqliteDialect,
  type SnowflakeIdSource,
} from '../../../lib/sequelize.js';
import { sqlite3Shaped } from '../../../lib/orm/sequelize/exact-sqlite.database.js';

/**
 * The same adapter over a better-sqlite3 that keeps its default of returning every integer as a JS number: what
 * Sequelize's default driver, node-sqlite3 (not installed here), returns. It stands for that route in the tests.
 */
export function roundingSqliteDialect(): ExactSqliteDialect {
  return sqlite3Shaped(
    class NumbersOnly extends Database {
      override defaultSafeIntegers(): this {
        return this;
      }
    },
  );
}

/** A Sequelize on the SQLite file (or `:memory:`) `storage`, with the exact adapter unless `rounding`. */
export function sqliteSequelize(
  storage: string,
  ids: SnowflakeIdSource,
  { rounding = false, ...options }: Options & { rounding?: boolean } = {},
): Sequelize {
  return new Sequelize({
    dialect: 'sqlite',
    storage,
    dialectModule: rounding ? roundingSqliteDialect() : exactSqliteDialect(),
    logging: false,
    hooks: snowflakeIdHooks(ids),
    ...options,
  });
}
