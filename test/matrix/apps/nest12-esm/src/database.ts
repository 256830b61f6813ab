import type { DynamicModule, INestApplicationContext, Type } from '@nestjs/common';

interface DatabasePart {
  DatabaseModule: Type | DynamicModule;
  saveAndReadBack(app: INestApplicationContext): Promise<{ saved: string; readBack: string }>;
}

// A specifier TypeScript does not resolve: the variant without TypeORM removes database.module.ts and post.entity.ts,
// and still builds the rest of the app unchanged.
const DATABASE_MODULE = './database.module.js';

/** The TypeORM part of the app, when DATABASE_URL is set. */
export async function databasePart(): Promise<DatabasePart | undefined> {
  if (!process.env.DATABASE_URL) return undefined;
  return (await import(DATABASE_MODULE)) as DatabasePart;
}
