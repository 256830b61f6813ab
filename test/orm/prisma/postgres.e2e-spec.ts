import { randomBytes } from 'node:crypto';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/postgres/client.js';
import { extensionCases } from './prisma-extension.cases.js';
import { prismaServiceCases } from './prisma-service.cases.js';
import { TABLES, type BasePrismaClient, type Harness } from './prisma-test.harness.js';
import { POSTGRES } from '../../support/databases.js';
import { skipVisibly } from '../../support/skip-notice.js';

/** The same server as the other PostgreSQL suites: move it with POSTGRES_HOST / POSTGRES_PORT. */
const PG_URL = `postgresql://${POSTGRES.username}@${POSTGRES.host}:${POSTGRES.port}/${POSTGRES.database}`;

/** The tables of schema.postgres.prisma in a schema of its own, so parallel runs and other suites never meet. */
const ddl = (s: string) => `
  CREATE SCHEMA "${s}";
  CREATE TABLE "${s}"."User" (
    "id" BIGINT PRIMARY KEY, "email" TEXT NOT NULL UNIQUE, "handle" TEXT UNIQUE, "name" TEXT);
  CREATE TABLE "${s}"."Post" (
    "id" BIGINT PRIMARY KEY, "title" TEXT NOT NULL, "authorId" BIGINT NOT NULL REFERENCES "${s}"."User" ("id"));
  CREATE TABLE "${s}"."Comment" (
    "id" TEXT PRIMARY KEY, "body" TEXT NOT NULL, "postId" BIGINT NOT NULL REFERENCES "${s}"."Post" ("id"));
  CREATE TABLE "${s}"."Profile" (
    "id" BIGINT PRIMARY KEY, "bio" TEXT NOT NULL, "userId" BIGINT NOT NULL UNIQUE REFERENCES "${s}"."User" ("id"));
  CREATE TABLE "${s}"."Invoice" ("id" BIGINT PRIMARY KEY, "reference" DECIMAL(65,30) NOT NULL UNIQUE, "total" INTEGER NOT NULL);
`;

async function reachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function openPostgres(): Promise<Harness> {
  const schema = `snowflake_prisma_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(ddl(schema));
  const newClient = () =>
    new PrismaClient({
      adapter: new PrismaPg({ connectionString: PG_URL }, { schema }),
    }) as unknown as BasePrismaClient;
  const client = newClient();
  return {
    client,
    newClient,
    clear: async () => {
      await admin.query(`TRUNCATE ${TABLES.map((t) => `"${schema}"."${t}"`).join(', ')}`);
    },
    close: async () => {
      await client.$disconnect();
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

const unreachable = await reachable();

if (unreachable === undefined) {
  describe('Prisma extension on PostgreSQL (pg adapter)', () => {
    extensionCases(openPostgres);
  });
  describe('PrismaService as the extended client under a class token, on PostgreSQL (pg adapter)', () => {
    prismaServiceCases(openPostgres);
  });
} else {
  skipVisibly(
    `PostgreSQL not reachable at ${PG_URL} (${unreachable})`,
    "the Prisma extension's PostgreSQL cases did not run. Set POSTGRES_HOST / POSTGRES_PORT to point at a server.",
    'runs the Prisma extension cases on PostgreSQL',
  );
}
