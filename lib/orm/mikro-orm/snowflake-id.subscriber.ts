import type { EntityMetadata, EventArgs, EventSubscriber } from '@mikro-orm/core';
import { issueId } from '../id-column.values.js';
import type { SnowflakeIdSource } from '../id-issuer.js';
import { SnowflakeIdType } from './snowflake-id.type.js';

/**
 * Fills every absent {@link SnowflakeIdType} property of an entity before MikroORM inserts it (`beforeCreate`, which
 * the unit of work runs for each new entity at flush, a parent before its children, and whose primary keys it
 * then uses). `em.insert()`, `em.insertMany()` and query builders skip entity hooks: give IDs there yourself.
 *
 * @publicApi
 */
export class SnowflakeIdSubscriber implements EventSubscriber {
  /** The snowflake properties per entity, worked out once: a bulk flush calls this for every entity. */
  private readonly plans = new WeakMap<EntityMetadata, ReadonlyArray<{ name: string; type: SnowflakeIdType }>>();

  constructor(private readonly ids: SnowflakeIdSource) {}

  beforeCreate({ entity, meta }: EventArgs<object>): void {
    const record = entity as Record<string, unknown>;
    for (const { name, type } of this.planOf(meta)) {
      if (record[name] === undefined) record[name] = issueId(this.ids, type.mode);
    }
  }

  private planOf(meta: EntityMetadata | undefined): ReadonlyArray<{ name: string; type: SnowflakeIdType }> {
    if (meta === undefined) return [];
    let plan = this.plans.get(meta);
    if (plan === undefined) {
      plan = meta.props.flatMap((prop) =>
        prop.customType instanceof SnowflakeIdType ? [{ name: prop.name, type: prop.customType }] : [],
      );
      this.plans.set(meta, plan);
    }
    return plan;
  }
}

/**
 * The subscriber for MikroORM's `subscribers` option, taking IDs from `ids` (the app's `IdService`).
 *
 * @example
 * ```ts
 * MikroOrmModule.forRootAsync({
 *   inject: [IdService],
 *   useFactory: (ids: IdService) => ({ driver: PostgreSqlDriver, …, subscribers: [snowflakeIdSubscriber(ids)] }),
 * })
 * ```
 *
 * @publicApi
 */
export function snowflakeIdSubscriber(ids: SnowflakeIdSource): SnowflakeIdSubscriber {
  return new SnowflakeIdSubscriber(ids);
}
