import { DataTypes, type Model, type Sequelize } from 'sequelize';
import { snowflakeIdAttribute } from '../../../lib/sequelize.js';
import type { ItemRow, ItemTable } from '../id-column.cases.js';

/**
 * The item model of the precision cases on `table`, `id` in bigint mode and `ref` in string mode. A few rows go
 * through `create()` (the beforeValidate hook), many through `bulkCreate()` (the beforeBulkCreate hook).
 */
export function itemTable(sequelize: Sequelize, table: string, close: () => Promise<void>): ItemTable {
  const Item = sequelize.define(
    table,
    {
      id: snowflakeIdAttribute('id'),
      ref: snowflakeIdAttribute('ref', { mode: 'string', primaryKey: false }),
      title: { type: DataTypes.STRING(20), allowNull: false },
    },
    { tableName: table, timestamps: false },
  );
  const plain = (item: Model): ItemRow => ({
    id: item.get('id') as bigint,
    ref: item.get('ref') as string,
    title: item.get('title') as string,
  });
  return {
    insertTitles: async (titles) => {
      if (titles.length > 3) await Item.bulkCreate(titles.map((title) => ({ title })));
      else for (const title of titles) await Item.create({ title });
    },
    insertRows: async (rows) => void (await Item.bulkCreate(rows.map((row) => ({ ...row })))),
    all: async () => (await Item.findAll({ order: [['title', 'ASC']] })).map(plain),
    byId: async (id) => (await Item.findAll({ where: { id: id } })).map(plain),
    byRef: async (ref) => (await Item.findAll({ where: { ref } })).map(plain),
    close,
  };
}
