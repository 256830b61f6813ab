import { Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, ModulesContainer } from '@nestjs/core';
import { getDataSourceToken, TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import { Column, DataSource, Entity } from 'typeorm';
import { IdService, SnowflakeModule } from '../../../lib/index.js';
import { GeneratedIdSubscriber } from '../../../lib/orm/typeorm/generated-id.subscriber.js';
import { TypeOrmAttacher } from '../../../lib/orm/typeorm/typeorm-attacher.service.js';
import {
  GeneratedId,
  IdServiceNotFoundError,
  safeIntegerDriver,
  SnowflakeTypeOrmModule,
} from '../../../lib/typeorm.js';
import { bootModules, RecordingLogger } from './support/app.js';
import { sqliteDirectory, uniqueSuffix } from '../../support/databases.js';

const files = sqliteDirectory();
afterAll(() => files.remove());

function itemEntity() {
  @Entity(`sf_module_item_${uniqueSuffix()}`)
  class Item {
    @GeneratedId()
    id!: bigint;

    @Column({ type: 'int' })
    n!: number;
  }
  return Item;
}

function sqliteOptions(entities: Array<new () => object>, name?: string): TypeOrmModuleOptions {
  return {
    ...(name === undefined ? {} : { name }),
    type: 'better-sqlite3',
    database: files.path(`${uniqueSuffix()}.db`),
    driver: safeIntegerDriver(Database),
    entities,
    synchronize: true,
  };
}

const attachedTo = (dataSource: DataSource) =>
  dataSource.subscribers.filter((subscriber) => subscriber instanceof GeneratedIdSubscriber).length;

describe('SnowflakeTypeOrmModule', () => {
  it('is the only way in: an app with SnowflakeModule and TypeOrmModule alone loads no discovery and fills nothing', async () => {
    const Item = itemEntity();
    const app = await bootModules([
      SnowflakeModule.forRoot({ workerId: 1 }),
      TypeOrmModule.forRoot(sqliteOptions([Item])),
    ]);
    try {
      const modules = [...app.get(ModulesContainer).values()].map((module) => module.metatype);
      expect(modules).toContain(SnowflakeModule);
      expect(modules).not.toContain(DiscoveryModule);
      expect(() => app.get(DiscoveryService, { strict: false })).toThrow();
      expect(() => app.get(TypeOrmAttacher, { strict: false })).toThrow();
      const dataSource = app.get(DataSource);
      expect(attachedTo(dataSource)).toBe(0);
      // What an app that upgrades without adding the module sees: an error that names the module to import.
      await expect(dataSource.getRepository(Item).insert({ n: 1 })).rejects.toThrow(/import SnowflakeTypeOrmModule/);
    } finally {
      await app.close();
    }
  });

  it('attaches to the default and a named DataSource, finding a SnowflakeModule registered in another, non-global module', async () => {
    const Item = itemEntity();
    const Other = itemEntity();
    @Module({ imports: [SnowflakeModule.forRoot({ workerId: 3 })] })
    class IdsModule {}
    const logger = new RecordingLogger();
    const app = await bootModules(
      [
        IdsModule,
        TypeOrmModule.forRoot(sqliteOptions([Item])),
        TypeOrmModule.forRoot(sqliteOptions([Other], 'reports')),
        SnowflakeTypeOrmModule,
      ],
      logger,
    );
    try {
      const ids = app.get(IdService, { strict: false });
      const dataSource = app.get(DataSource);
      const named = app.get<DataSource>(getDataSourceToken('reports'));
      for (const [source, entity] of [
        [dataSource, Item],
        [named, Other],
      ] as const) {
        expect(attachedTo(source)).toBe(1);
        const row = { n: 1 };
        await source.getRepository(entity).insert(row);
        expect(ids.decode((row as { id?: bigint }).id!).workerId).toBe(3);
      }
      expect(logger.warnings).toEqual([]);
      expect(logger.errors).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('attaches once when imported by several modules', async () => {
    const Item = itemEntity();
    @Module({ imports: [SnowflakeTypeOrmModule] })
    class FeatureModule {}
    const logger = new RecordingLogger();
    const app = await bootModules(
      [
        SnowflakeModule.forRoot({ workerId: 1 }),
        TypeOrmModule.forRoot(sqliteOptions([Item])),
        SnowflakeTypeOrmModule,
        FeatureModule,
      ],
      logger,
    );
    try {
      expect(attachedTo(app.get(DataSource))).toBe(1);
      expect(logger.warnings).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('fails the bootstrap, saying what to import, when the app has no SnowflakeModule', async () => {
    const boot = bootModules([TypeOrmModule.forRoot(sqliteOptions([itemEntity()])), SnowflakeTypeOrmModule]);
    await expect(boot).rejects.toThrow(IdServiceNotFoundError);
    await expect(boot).rejects.toThrow(/Import SnowflakeModule\.forRoot\(…\) or forRootAsync\(…\)/);
  });
});
