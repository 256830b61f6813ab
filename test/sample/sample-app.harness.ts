import type { INestApplication, LogLevel } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import request from 'supertest';
import { tempDirectory as sharedTempDirectory } from '../support/temp-dir.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The environment the sample app reads, as a test sets it. */
export interface SampleEnv {
  REDIS_URL: string;
  DATABASE_URL: string;
  SNOWFLAKE_NAMESPACE: string;
  SNOWFLAKE_LEASE_TTL_MS?: string;
}

/**
 * Boots the sample's AppModule from source, configured through the environment as in production. The sample imports
 * the library by package name, which resolves to the built `dist/` (run `npm run build` first; `npm test` does).
 */
export async function startSampleApp(
  env: SampleEnv,
  options: { logger?: false | LogLevel[] } = {},
): Promise<INestApplication> {
  if (!existsSync(join(root, 'dist/index.js'))) {
    throw new Error('The sample imports the built package: run `npm run build` before these tests.');
  }
  if (!existsSync(join(root, 'sample-app/generated/sqlite/client.ts'))) {
    execFileSync('npm', ['run', 'sample:generate'], { cwd: root, stdio: 'inherit' });
  }
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    // Imported only now: the Prisma client it loads may just have been generated.
    const { AppModule } = await import('../../sample-app/src/app.module.js');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: options.logger ?? ['error'] });
    await app.init();
    return app;
  } finally {
    // The app has read its configuration by now; leave the environment as it was for other suites in this worker.
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** supertest against the app's HTTP server. */
export function http(app: INestApplication) {
  return request(app.getHttpServer() as Server);
}

/** A fresh directory for SQLite files, removed by `remove()`. */
export function tempDirectory(): { path(name: string): string; remove(): void } {
  return sharedTempDirectory('snowflake-sample-');
}

/** Where the tests look for PostgreSQL; move it with POSTGRES_HOST / POSTGRES_PORT. */
export const POSTGRES = {
  host: process.env.POSTGRES_HOST ?? '127.0.0.1',
  port: Number(process.env.POSTGRES_PORT ?? 5432),
  user: 'postgres',
  database: 'test',
};

/**
 * A database of its own on the local PostgreSQL, so the sample's fixed table names never meet another suite's, or
 * `undefined` when PostgreSQL does not answer.
 */
export async function createPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = new pg.Client({ ...POSTGRES, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    await admin.end().catch(() => undefined);
    return undefined;
  }
  const name = `snowflake_sample_${process.pid}_${Date.now().toString(36)}`;
  await admin.query(`CREATE DATABASE ${name}`);
  return {
    url: `postgres://${POSTGRES.user}@${POSTGRES.host}:${POSTGRES.port}/${name}`,
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
