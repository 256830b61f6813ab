import Database from 'better-sqlite3';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { GeneratedId, IdPrecisionLossError } from '../../../lib/typeorm.js';
import { bootApp } from './support/app.js';
import {
  describeWhenReachable,
  MARIADB,
  mariadbReachable,
  sqliteDirectory,
  uniqueSuffix,
} from '../../support/databases.js';

/** Drivers that would round 64-bit integers must stop the app at bootstrap, naming the DataSource and the fix. */

function ticketEntity(suffix = uniqueSuffix()) {
  @Entity(`sf_ticket_${suffix}`)
  class Ticket {
    @GeneratedId()
    id!: string;

    @Column({ type: 'varchar', length: 50 })
    title!: string;
  }
  return Ticket;
}

describe('better-sqlite3 without safe integers', () => {
  const files = sqliteDirectory();
  afterAll(() => files.remove());

  it('fails the bootstrap with the DataSource name and the fix', async () => {
    const boot = bootApp([
      { type: 'better-sqlite3', database: files.path('default.db'), entities: [ticketEntity()], synchronize: true },
    ]);
    await expect(boot).rejects.toThrow(IdPrecisionLossError);
    await expect(boot).rejects.toThrow(
      /DataSource "default" \(better-sqlite3\).*9007199254740992.*safeIntegerDriver\(Database\)/,
    );
  });

  it('names a named DataSource', async () => {
    const boot = bootApp([
      { type: 'better-sqlite3', database: files.path('a.db'), entities: [], synchronize: true },
      {
        name: 'archive',
        type: 'better-sqlite3',
        database: files.path('b.db'),
        entities: [ticketEntity()],
        synchronize: true,
      },
    ]);
    await expect(boot).rejects.toThrow(/DataSource "archive"/);
  });

  it('leaves a DataSource without @GeneratedId() entities alone', async () => {
    @Entity(`sf_plain_${uniqueSuffix()}`)
    class Plain {
      @PrimaryColumn({ type: 'int' })
      id!: number;
    }
    const app = await bootApp([
      { type: 'better-sqlite3', database: files.path('plain.db'), entities: [Plain], synchronize: true },
    ]);
    await app.close();
  });

  it('refuses to read back an ID the driver rounded, even without the probe', async () => {
    const Ticket = ticketEntity();
    const ds = await new DataSource({
      type: 'better-sqlite3',
      database: files.path('read.db'),
      entities: [Ticket],
      synchronize: true,
    }).initialize();
    try {
      const table = ds.getRepository(Ticket).metadata.tableName;
      await ds.query(`INSERT INTO "${table}" (id, title) VALUES (9007199254740993, 'rounded')`);
      await expect(ds.getRepository(Ticket).find()).rejects.toThrow(IdPrecisionLossError);
      await expect(ds.getRepository(Ticket).find()).rejects.toThrow(/Reading Ticket\.id/);
    } finally {
      await ds.destroy();
    }
  });

  it('passes with safe integers: the probe value comes back exact', async () => {
    const app = await bootApp([
      {
        type: 'better-sqlite3',
        database: files.path('safe.db'),
        entities: [ticketEntity()],
        synchronize: true,
        prepareDatabase: (db: Database.Database) => void db.defaultSafeIntegers(true),
      },
    ]);
    await app.close();
  });
});

describeWhenReachable(await mariadbReachable(), 'MariaDB', `${MARIADB.host}:${MARIADB.port}`, () => {
  describe('MariaDB with supportBigNumbers off', () => {
    const suffix = uniqueSuffix();
    afterAll(async () => {
      // The synchronize that ran before the probe created the table.
      const cleanup = await new DataSource({ type: 'mariadb', ...MARIADB }).initialize();
      await cleanup.query(`DROP TABLE IF EXISTS \`sf_ticket_${suffix}\``);
      await cleanup.destroy();
    });

    it('fails the bootstrap with the DataSource name and the fix', async () => {
      const boot = bootApp([
        {
          type: 'mariadb',
          ...MARIADB,
          supportBigNumbers: false,
          bigNumberStrings: false,
          entities: [ticketEntity(suffix)],
          synchronize: true,
        },
      ]);
      await expect(boot).rejects.toThrow(IdPrecisionLossError);
      await expect(boot).rejects.toThrow(
        /DataSource "default" \(mariadb\).*supportBigNumbers: true, bigNumberStrings: true/,
      );
    });
  });
});
