import { prismaServiceCases } from './prisma-service.cases.js';
import { openSqlite } from './sqlite.harness.js';

describe('PrismaService as the extended client under a class token, on SQLite (better-sqlite3 adapter)', () => {
  prismaServiceCases(openSqlite);
});
