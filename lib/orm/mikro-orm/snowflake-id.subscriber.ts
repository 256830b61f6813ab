import type { EntityMetadata, EventArgs, EventSubscriber } from '@mikro-orm/core';
import { fillAbsentIds } from '../absent-ids.js';
import type { SnowflakeColumnMode } from '../id-column.values.js';
import type { SnowflakeIdSource } from '../id-issuer.js';
import { SnowflakeIdType } from './snowflake-id.type.js';

/** A snowflake property of an entity: its name and its type, which holds the JS type of its values. */
interface PlannedProperty {
  readonly name: string;
  readonly type: SnowflakeIdType<SnowflakeColumnMode>;
}

/**
 * Fills every absent {@link SnowflakeIdType} property of an entity before MikroORM inserts it (`beforeCreate`, which
 * the unit of work runs and awaits for each new entity at flush, a parent before its children, and whose primary
 * keys it then uses). `em.insert()`, `em.insertMany()` and query builders skip entity hooks: give IDs there yourself.
 *
 * While the worker ID is being re-claimed (a Redis outage), the hook waits for it through the source's `nextAsync()`:
 * with `IdService`, at most the module's `maxAsyncWaitMs`, then the flush fails with `WorkerWaitTimeoutError` (a
 * `WorkerUnavailableError`, 503 over HTTP), and its transaction is rolled back.
 *
 * @publicApi
 */
export class SnowflakeIdSubscriber implements EventSubscriber {
  /** The snowflake properties per entity, worked out once: a bulk flush calls this for every entity. */
  private readonly plans = new WeakMap<EntityMetadata, readonly PlannedProperty[]>();

  constructor(private readonly ids: SnowflakeIdSource) {}

  beforeCreate({ entity, meta }: EventArgs<object>): void | Promise<void> {
    return fillAbsentIds(this.ids, entity as Record<string, unknown>, this.planOf(meta), isAbsent, write);
  }

  private planOf(meta: EntityMetadata | undefined): readonly PlannedProperty[] {
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

function isAbsent(entity: Record<string, unknown>, { name }: PlannedProperty): boolean {
  return entity[name] === undefined;
}

function write(entity: Record<string, unknown>, { name, type }: PlannedProperty, id: bigint): void {
  entity[name] = type.mode === 'string' ? id.toString() : id;
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
