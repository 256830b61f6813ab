import mysql from 'mysql2/promise';
import pg from 'pg';
import { skipVisibly } from './skip-notice.js';
import { tempDirectory } from './temp-dir.js';

/** Where the tests look for PostgreSQL and MariaDB; the host and port can be moved with environment variables. */
export const POSTGRES = {
  host: process.env.POSTGRES_HOST ?? '127.0.0.1',
  port: Number(process.env.POSTGRES_PORT ?? 5432),
  username: 'postgres',
  database: 'test',
} as const;
export const MARIADB = {
  host: process.env.MARIADB_HOST ?? '127.0.0.1',
  port: Number(process.env.MARIADB_PORT ?? 3306),
  username: 'root',
  password: '',
  database: 'test',
} as const;

/** A suffix for table names, so suites running in parallel against one database never share a table. */
export function uniqueSuffix(): string {
  return `${process.pid.toString(36)}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
}

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({
    host: POSTGRES.host,
    port: POSTGRES.port,
    user: POSTGRES.username,
    database: POSTGRES.database,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function mariadbReachable(): Promise<boolean> {
  try {
    const connection = await mysql.createConnection({
      host: MARIADB.host,
      port: MARIADB.port,
      user: MARIADB.username,
      password: MARIADB.password,
      database: MARIADB.database,
      connectTimeout: 2000,
    });
    await connection.query('SELECT 1');
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `suite` when the database answers; otherwise registers a visibly skipped describe block, so a run without
 * the database reports it instead of passing silently.
 */
export function describeWhenReachable(reachable: boolean, database: string, address: string, suite: () => void): void {
  if (reachable) {
    suite();
    return;
  }
  skipVisibly(
    `${database} not reachable at ${address}`,
    'its @GeneratedId() tests did not run.',
    `needs ${database} at ${address}`,
  );
}

/** A fresh directory under the OS temp dir for SQLite files, removed by the returned function. */
export function sqliteDirectory(): { path(name: string): string; remove(): void } {
  return tempDirectory('snowflake-typeorm-');
}
