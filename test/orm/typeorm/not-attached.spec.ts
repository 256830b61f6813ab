/**
 * `@GeneratedId()` in an app that forgot `SnowflakeTypeOrmModule` (or, without Nest, `attachGeneratedIds`): the
 * insert must fail with an error naming the missing import, not the database's NOT NULL error.
 */
import Database from 'better-sqlite3';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Column, DataSource, Entity } from 'typeorm';
import { SnowflakeModule } from '../../../lib/index.js';
import { GeneratedId, GeneratedIdNotFilledError, safeIntegerDriver } from '../../../lib/typeorm.js';
import { bootApp, bootModules } from './support/app.js';
import { sqliteDirectory } from '../../support/databases.js';

@Entity('not_attached_note')
class Note {
  @GeneratedId()
  id!: string;

  @Column({ type: 'varchar', length: 50 })
  text!: string;
}

const files = sqliteDirectory();
afterAll(() => files.remove());

let database = 0;
const sqlite = () => ({
  type: 'better-sqlite3' as const,
  database: files.path(`not-attached-${(database += 1)}.db`),
  driver: safeIntegerDriver(Database),
  entities: [Note],
  synchronize: true,
});

describe('@GeneratedId() without SnowflakeTypeOrmModule', () => {
  it('fails save() and insert() with GeneratedIdNotFilledError naming the import, and writes no row', async () => {
    const app = await bootModules([SnowflakeModule.forRoot({ workerId: 1 }), TypeOrmModule.forRoot(sqlite())]);
    try {
      const notes = app.get(DataSource).getRepository(Note);
      const saving = notes.save(notes.create({ text: 'a' }));
      await expect(saving).rejects.toThrow(GeneratedIdNotFilledError);
      await expect(saving).rejects.toThrow(/Note\.id has no ID at insert.*import SnowflakeTypeOrmModule/);
      await expect(notes.insert({ text: 'b' })).rejects.toThrow(GeneratedIdNotFilledError);
      expect(await notes.count()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('names the column of the failing entity on the error', async () => {
    const dataSource = await new DataSource(sqlite()).initialize();
    try {
      const error = await dataSource
        .getRepository(Note)
        .save({ text: 'c' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GeneratedIdNotFilledError);
      expect((error as GeneratedIdNotFilledError).column).toBe('Note.id');
      expect((error as Error).message).toContain('attachGeneratedIds(dataSource, idService)');
    } finally {
      await dataSource.destroy();
    }
  });
});

describe('@GeneratedId() with SnowflakeTypeOrmModule', () => {
  it('fills the ID, and an insert that skips listeners gets the same error, since nothing fills it there', async () => {
    const app = await bootApp([sqlite()]);
    try {
      const notes = app.get(DataSource).getRepository(Note);
      const saved = await notes.save(notes.create({ text: 'd' }));
      expect(saved.id).toMatch(/^[1-9]\d*$/);
      const skipping = notes.createQueryBuilder().insert().values({ text: 'e' }).callListeners(false).execute();
      await expect(skipping).rejects.toThrow(GeneratedIdNotFilledError);
      expect(await notes.count()).toBe(1);
    } finally {
      await app.close();
    }
  });
});
