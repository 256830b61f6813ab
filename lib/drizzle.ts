/**
 * `nestjs-snowflake/drizzle`: snowflake ID columns for Drizzle tables (PostgreSQL, MySQL/MariaDB, SQLite) and the
 * module that binds the app's `IdService` to them. A separate entry point, so that `drizzle-orm` stays an optional
 * peer: nothing else imports it.
 */
import { type DynamicModule } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { findRegistry } from './module/snowflake.registry.js';
import {
  DRIZZLE_ID_ISSUERS,
  DRIZZLE_OPTIONS,
  DrizzleSlotBinder,
  type SnowflakeDrizzleOptions,
} from './orm/drizzle/drizzle-slot.binder.js';
import type { IdIssuers } from './orm/typeorm/generated-id.issuers.js';

export { mysqlSnowflakeId, pgSnowflakeId, sqliteSnowflakeId } from './orm/drizzle/drizzle-columns.js';
export { DrizzleIdsNotBoundError, SnowflakeIdSlot, snowflakeIdSlot } from './orm/drizzle/drizzle-id.slot.js';
export type { SnowflakeColumnMode, SnowflakeColumnOptions, SnowflakeColumnValue } from './orm/id-column.values.js';
export type { SnowflakeDrizzleOptions } from './orm/drizzle/drizzle-slot.binder.js';
export type { SnowflakeIdSource } from './orm/id-issuer.js';
export { IdPrecisionLossError, IdServiceNotFoundError } from './orm/typeorm/generated-id.errors.js';
export { safeIntegerDriver } from './orm/typeorm/sqlite.safe-integers.js';

/**
 * Binds the app's `IdService`s to the ID slots of its Drizzle tables, so that their snowflake columns fill IDs on
 * insert. Import it beside `SnowflakeModule.forRoot(…)`; SnowflakeModule need not be global.
 *
 * @example
 * ```ts
 * // schema.ts
 * export const ids = snowflakeIdSlot();
 * export const posts = pgTable('posts', { id: pgSnowflakeId('id', ids).primaryKey(), title: text('title') });
 * // app.module.ts
 * @Module({ imports: [SnowflakeModule.forRoot({ redis: { url } }), SnowflakeDrizzleModule.forRoot({ ids })] })
 * ```
 *
 * @publicApi
 */
export class SnowflakeDrizzleModule {
  static forRoot(options: SnowflakeDrizzleOptions): DynamicModule {
    return {
      module: SnowflakeDrizzleModule,
      providers: [
        { provide: DRIZZLE_OPTIONS, useValue: options },
        // This entry is the one place of the Drizzle integration that knows the module's registry of IdServices.
        { provide: DRIZZLE_ID_ISSUERS, useFactory: registryLookup, inject: [ModuleRef] },
        DrizzleSlotBinder,
      ],
    };
  }
}

function registryLookup(moduleRef: ModuleRef): () => IdIssuers | undefined {
  return () => {
    const registry = findRegistry(moduleRef);
    return registry && { get: (name) => registry.get(name), names: () => registry.names() };
  };
}
