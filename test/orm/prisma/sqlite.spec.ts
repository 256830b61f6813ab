import { extensionCases } from './prisma-extension.cases.js';
import { openSqlite } from './sqlite.harness.js';

describe('Prisma extension on SQLite (better-sqlite3 adapter)', () => {
  extensionCases(openSqlite);
});
