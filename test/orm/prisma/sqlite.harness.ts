import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import Database from 'better-sqlite3';
import { PrismaClient } from './generated/sqlite/client.js';
import { TABLES, type Harness } from './prisma-test.harness.js';

/** The tables of schema.prisma, as `prisma db push` would make them (it needs the schema engine, absent here). */
const DDL = `
  CREATE TABLE "User" (
    "id" BIGINT NOT NULL PRIMARY KEY, "email" TEXT NOT NULL UNIQUE, "handle" TEXT UNIQUE, "name" TEXT);
  CREATE TABLE "Post" (
    "id" BIGINT NOT NULL PRIMARY KEY, "title" TEXT NOT NULL,
    "authorId" BIGINT NOT NULL REFERENCES "User" ("id"));
  CREATE TABLE "Comment" (
    "id" TEXT NOT NULL PRIMARY KEY, "body" TEXT NOT NULL, "postId" BIGINT NOT NULL REFERENCES "Post" ("id"));
  CREATE TABLE "Profile" (
    "id" BIGINT NOT NULL PRIMARY KEY, "bio" TEXT NOT NULL,
    "userId" BIGINT NOT NULL UNIQUE REFERENCES "User" ("id"));
  CREATE TABLE "Invoice" ("id" BIGINT NOT NULL PRIMARY KEY, "reference" DECIMAL NOT NULL UNIQUE, "total" INTEGER NOT NULL);
`;

export interface SqliteHarness extends Harness {
  /** The database file, for a second client on the same data. */
  readonly file: string;
}

/** A fresh SQLite file under the OS temp directory, with the test tables. */
export function openSqlite(): Promise<SqliteHarness> {
  const file = join(tmpdir(), `nestjs-snowflake-prisma-${process.pid}-${randomUUID()}.db`);
  const setup = new Database(file);
  setup.exec(DDL);
  setup.close();
  const newClient = () => new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: `file:${file}` }) });
  const client = newClient();
  return Promise.resolve({
    file,
    client,
    newClient,
    clear: async () => {
      for (const table of TABLES) await client.$executeRawUnsafe(`DELETE FROM "${table}"`);
    },
    close: async () => {
      await client.$disconnect();
      for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
    },
  });
}
