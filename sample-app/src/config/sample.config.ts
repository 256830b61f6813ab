import type { ConfigService } from '@nestjs/config';
import type { RedisLeaseOptions } from 'nestjs-snowflake';
import { resolve } from 'node:path';

/** Where the sample keeps its rows: a SQLite file by default, PostgreSQL when DATABASE_URL points at one. */
export type DatabaseConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/**
 * The sample's own settings, read from the environment (and a `.env` file, through ConfigModule). The lease settings
 * are read where SnowflakeModule is registered, by {@link redisLeaseOptions}.
 */
export interface SampleConfig {
  port: number;
  database: DatabaseConfig;
}

const DEFAULT_SQLITE_FILE = 'sample.sqlite';

/** Reads and checks the environment, failing at startup with the variable's name rather than later on a request. */
export function sampleConfig(config: ConfigService): SampleConfig {
  return {
    port: integer(config, 'PORT', 3000),
    database: databaseFromUrl(config.get<string>('DATABASE_URL')),
  };
}

/**
 * The worker-ID lease from REDIS_URL, SNOWFLAKE_NAMESPACE and SNOWFLAKE_LEASE_TTL_MS. A malformed TTL fails here with
 * the variable's name; the library then checks the values themselves (a namespace's characters, a TTL of 1 s at least).
 */
export function redisLeaseOptions(config: ConfigService): RedisLeaseOptions {
  return {
    url: config.get<string>('REDIS_URL') || 'redis://127.0.0.1:6379',
    namespace: config.get<string>('SNOWFLAKE_NAMESPACE') || 'sample-app',
    // Unset keeps the library's default TTL (10 s).
    ttlMs: config.get<string>('SNOWFLAKE_LEASE_TTL_MS') ? integer(config, 'SNOWFLAKE_LEASE_TTL_MS', 0) : undefined,
  };
}

/**
 * `postgres://…` or `postgresql://…` selects PostgreSQL; `file:path`, `sqlite:path` or a bare path selects a SQLite
 * file, resolved against the working directory.
 */
export function databaseFromUrl(url: string | undefined): DatabaseConfig {
  if (url === undefined || url === '') return { kind: 'sqlite', file: resolve(DEFAULT_SQLITE_FILE) };
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  const path = /^(file|sqlite):/.test(url) ? url.replace(/^(file|sqlite):(\/\/)?/, '') : url;
  if (path === '' || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new Error(`DATABASE_URL ${JSON.stringify(url)}: expected postgres://…, file:<path> or a SQLite file path.`);
  }
  return { kind: 'sqlite', file: resolve(path) };
}

function integer(config: ConfigService, name: string, fallback: number): number {
  const raw = config.get<string>(name);
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}.`);
  return value;
}
