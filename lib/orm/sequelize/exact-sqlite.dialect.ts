import { createRequire } from 'node:module';
import { SnowflakeConfigError } from '../../core/errors.js';
import { sqlite3Shaped, type ExactSqliteDialect, type NativeDatabaseClass } from './exact-sqlite.database.js';

/**
 * A driver for Sequelize's sqlite dialect that reads 64-bit integers exactly, for its `dialectModule` option: the
 * node-sqlite3 API that Sequelize 6 calls, over better-sqlite3 with safe integers. An integer that a JS number holds
 * exactly comes back as a number (counts, `INTEGER` columns), a larger one as its decimal string, which
 * {@link snowflakeIdAttribute} reads exactly. node-sqlite3, the dialect's default driver, returns every integer as a
 * number, which rounds snowflake IDs above 2^53.
 *
 * better-sqlite3 (an optional peer) is loaded when this is called, not when the entry is imported.
 *
 * @example
 * new Sequelize({ dialect: 'sqlite', storage: 'app.db', dialectModule: exactSqliteDialect(), hooks: snowflakeIdHooks(ids) });
 * @publicApi
 */
export function exactSqliteDialect(): ExactSqliteDialect {
  return sqlite3Shaped(loadBetterSqlite3());
}

/**
 * better-sqlite3's `Database` class, or an error that says how to install it. `require` resolves from this file: a
 * synchronous require, because Sequelize takes the module in its constructor (better-sqlite3 is CommonJS).
 * @internal
 */
export function loadBetterSqlite3(require: NodeJS.Require = createRequire(import.meta.url)): NativeDatabaseClass {
  try {
    return require('better-sqlite3') as NativeDatabaseClass;
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code !== 'MODULE_NOT_FOUND' || !message?.includes("'better-sqlite3'")) throw error;
    throw new SnowflakeConfigError(
      'dialectModule',
      'exactSqliteDialect() runs Sequelize on better-sqlite3, an optional peer of nestjs-snowflake that is not ' +
        'installed: run `npm install better-sqlite3`.',
    );
  }
}
