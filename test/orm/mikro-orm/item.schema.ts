import { EntitySchema, type MikroORM } from '@mikro-orm/core';
import { SnowflakeIdType } from '../../../lib/mikro-orm.js';
import type { ItemRow, ItemTable } from '../id-column.cases.js';

/** The item entity of the precision cases, mapped to `table`: `id` in bigint mode, `ref` in string mode. */
export function itemSchema(table: string) {
  class Item {
    id!: bigint;
    ref!: string;
    title!: string;
  }
  const schema = new EntitySchema<Item>({
    class: Item,
    tableName: table,
    properties: {
      id: { type: SnowflakeIdType, primary: true, autoincrement: false },
      ref: { type: new SnowflakeIdType('string'), unique: true },
      title: { type: 'string' },
    },
  });
  return { Item, schema };
}

const plain = (item: ItemRow): ItemRow => ({ id: item.id, ref: item.ref, title: item.title });

/** The case operations through MikroORM's unit of work and finders, each in a forked EntityManager. */
export function itemTable(orm: MikroORM, Item: new () => ItemRow, close: () => Promise<void>): ItemTable {
  return {
    insertTitles: async (titles) => {
      const em = orm.em.fork();
      for (const title of titles) em.persist(Object.assign(new Item(), { title }));
      await em.flush();
    },
    insertRows: async (rows) => {
      const em = orm.em.fork();
      for (const row of rows) em.persist(Object.assign(new Item(), row));
      await em.flush();
    },
    all: async () => (await orm.em.fork().find(Item, {}, { orderBy: { title: 'asc' } })).map(plain),
    byId: async (id) => (await orm.em.fork().find(Item, { id })).map(plain),
    byRef: async (ref) => (await orm.em.fork().find(Item, { ref })).map(plain),
    close,
  };
}
