import { SnowflakeCodec } from '../../../lib/core/codec.js';
import { SnowflakeGenerator } from '../../../lib/core/generator.js';
import { resolveLayout } from '../../../lib/core/layout.js';
import { snowflakeExtension, type SnowflakePrismaOptions } from '../../../lib/prisma.js';
import type { PrismaClient } from './generated/sqlite/client.js';

/**
 * The client type the shared cases are written against. The PostgreSQL client is generated from a twin of the
 * SQLite schema, so its model API is the same; its harness casts it to this type.
 */
export type BasePrismaClient = PrismaClient;

/** The options every suite applies: doc-comment marks from the schema, plus Invoice listed by name. */
export const INVOICE_FIELDS: SnowflakePrismaOptions = { fields: { Invoice: ['id', 'reference'] } };

export function extendClient(client: BasePrismaClient, ids: SnowflakeGenerator, options = INVOICE_FIELDS) {
  return client.$extends(snowflakeExtension(ids, options));
}

export type TestClient = ReturnType<typeof extendClient>;

/** A database with the test tables, opened by each suite. */
export interface Harness {
  readonly client: BasePrismaClient;
  /** A second client of its own on the same database, as an app's provider creates one. */
  newClient(): BasePrismaClient;
  /** Empties every table. */
  clear(): Promise<void>;
  /** Disconnects and removes the database (file or schema). */
  close(): Promise<void>;
}

/** A generator on a fixed worker, so every ID the tests see can be traced to it by decoding. */
export function testIds(workerId: number, datacenterId: number) {
  const layout = resolveLayout({ preset: 'twitter' });
  return {
    generator: new SnowflakeGenerator({ layout, workerId, datacenterId }),
    codec: new SnowflakeCodec(layout),
  };
}

/** Table names in delete order (children first). */
export const TABLES = ['Comment', 'Post', 'Profile', 'User', 'Invoice'] as const;
