import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaPg } from '@prisma/adapter-pg';
import { IdService } from 'nestjs-snowflake';
import { snowflakeExtension } from 'nestjs-snowflake/prisma';
import { PrismaClient as PostgresPrismaClient } from '../../generated/postgres/client.js';
import { PrismaClient as SqlitePrismaClient } from '../../generated/sqlite/client.js';
import { DATABASE_CONFIG } from '../config/sample-config.module.js';
import type { DatabaseConfig } from '../config/sample.config.js';

function sqliteClient(file: string, ids: IdService) {
  return new SqlitePrismaClient({ adapter: new PrismaBetterSqlite3({ url: file }) }).$extends(snowflakeExtension(ids));
}

/** The Prisma client with the snowflake extension: `create` fills the `/// @GeneratedId` fields. */
export type NotesClient = ReturnType<typeof sqliteClient>;

/**
 * The Prisma client of the notes module, on the same database as TypeORM. Both generated clients come from the same
 * models, so the PostgreSQL one is used through the SQLite one's type.
 */
@Injectable()
export class NotesPrisma implements OnModuleInit, OnApplicationShutdown {
  readonly client: NotesClient;

  constructor(
    ids: IdService,
    @Inject(DATABASE_CONFIG) private readonly database: DatabaseConfig,
  ) {
    this.client =
      database.kind === 'sqlite'
        ? sqliteClient(database.file, ids)
        : (new PostgresPrismaClient({ adapter: new PrismaPg({ connectionString: database.url }) }).$extends(
            snowflakeExtension(ids),
          ) as unknown as NotesClient);
  }

  /**
   * Creates the table if needed. Plain SQL keeps the sample free of a migration step (Prisma Migrate needs its
   * schema engine); a real app would run `prisma migrate deploy` instead.
   */
  async onModuleInit(): Promise<void> {
    // No column default for the ID: a row created without the extension fails instead of getting a made-up ID. In
    // SQLite that rules out the type INTEGER, whose PRIMARY KEY aliases the rowid and fills itself in.
    const statements =
      this.database.kind === 'sqlite'
        ? [
            'CREATE TABLE IF NOT EXISTS audit_notes (id BIGINT PRIMARY KEY NOT NULL, subject_id BIGINT, text TEXT NOT NULL)',
            'CREATE INDEX IF NOT EXISTS audit_notes_subject_id_idx ON audit_notes (subject_id)',
          ]
        : [
            'CREATE TABLE IF NOT EXISTS audit_notes (id BIGINT PRIMARY KEY, subject_id BIGINT, text TEXT NOT NULL)',
            'CREATE INDEX IF NOT EXISTS audit_notes_subject_id_idx ON audit_notes (subject_id)',
          ];
    for (const statement of statements) await this.client.$executeRawUnsafe(statement);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.$disconnect();
  }
}
