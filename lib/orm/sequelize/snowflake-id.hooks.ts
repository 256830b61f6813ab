import type { Model, ModelStatic } from 'sequelize';
import type { SnowflakeIdSource } from '../id-issuer.js';
import { snowflakeIdModeOf } from './snowflake-id.attribute.js';

/** The hooks of {@link snowflakeIdHooks}, for Sequelize's `hooks` option or `sequelize.addHook`. @publicApi */
export interface SnowflakeIdHooks {
  beforeValidate(instance: Model): void;
  beforeBulkCreate(instances: Model[]): void;
}

/**
 * Hooks that fill every absent (null or undefined) {@link snowflakeIdAttribute} of a new row: `beforeValidate` for
 * `create()` and `save()` (it runs before the NOT NULL check of the primary key), `beforeBulkCreate` for
 * `bulkCreate()`. Pass them as the `hooks` option of the Sequelize instance, so that they apply to every model.
 * Raw queries and `queryInterface.bulkInsert` run no hooks: give IDs there yourself.
 *
 * @param ids the app's `IdService`, or any source with `next(): bigint`
 * @example
 * SequelizeModule.forRootAsync({
 *   inject: [IdService],
 *   useFactory: (ids: IdService) => ({ dialect: 'postgres', …, hooks: snowflakeIdHooks(ids) }),
 * })
 * @publicApi
 */
export function snowflakeIdHooks(ids: SnowflakeIdSource): SnowflakeIdHooks {
  const plans = new WeakMap<object, string[]>();
  const attributesOf = (model: ModelStatic<Model>): string[] => {
    let names = plans.get(model);
    if (names === undefined) {
      names = Object.entries(model.getAttributes())
        .filter(([, attribute]) => snowflakeIdModeOf(attribute.type) !== undefined)
        .map(([name]) => name);
      plans.set(model, names);
    }
    return names;
  };
  const fill = (instance: Model): void => {
    for (const name of attributesOf(instance.constructor as ModelStatic<Model>)) {
      const value: unknown = instance.getDataValue(name as never);
      // Sequelize starts the primary key of a new instance at null: null means absent here.
      if (value === null || value === undefined) instance.setDataValue(name as never, ids.next());
    }
  };
  return {
    beforeValidate: (instance) => {
      if (instance.isNewRecord) fill(instance);
    },
    beforeBulkCreate: (instances) => {
      for (const instance of instances) fill(instance);
    },
  };
}
