/**
 * `nestjs-snowflake/typeorm`: `@GeneratedId()` for TypeORM entities. A separate entry point, so that `typeorm` stays
 * an optional peer and an app without TypeORM never loads the DataSource discovery.
 */
import { Module } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { findRegistry } from './module/snowflake.registry.js';
import { SNOWFLAKE_ID_ISSUER, TypeOrmAttacher, type IdIssuerLookup } from './orm/typeorm/typeorm-attacher.service.js';

export type { IdIssuer } from './orm/id-issuer.js';
export { attachGeneratedIds, type AttachGeneratedIdsOptions } from './orm/typeorm/generated-id.attach.js';
export { GeneratedId } from './orm/typeorm/generated-id.decorator.js';
export {
  DataSourceNotInitializedError,
  GeneratedIdNotFilledError,
  GeneratedIdTypeError,
  IdPrecisionLossError,
  IdServiceNotFoundError,
} from './orm/typeorm/generated-id.errors.js';
export type { GeneratedIdJsType } from './orm/typeorm/generated-id.metadata.js';
export type { GeneratedIdOptions } from './orm/typeorm/generated-id.options.js';
export { safeIntegerDriver } from './orm/typeorm/sqlite.safe-integers.js';
export type { DataSourceLike } from './orm/typeorm/typeorm.structural.js';

/**
 * Fills `@GeneratedId()` columns on every TypeORM DataSource of the app, named ones included: at bootstrap it finds
 * them, checks their entities against the layout and the driver's 64-bit precision, and attaches the subscriber that
 * fills IDs on insert. Import it once, beside `SnowflakeModule.forRoot(…)` and `TypeOrmModule.forRoot(…)`.
 * SnowflakeModule need not be global: the module finds the app's `IdService`s wherever they are registered, the
 * named ones too (`@GeneratedId({ generator: 'orders' })`).
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     SnowflakeModule.forRoot({ redis: { url: process.env.REDIS_URL } }),
 *     TypeOrmModule.forRoot({ type: 'postgres', url: process.env.DATABASE_URL, autoLoadEntities: true }),
 *     SnowflakeTypeOrmModule,
 *   ],
 * })
 * export class AppModule {}
 * ```
 *
 * @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    TypeOrmAttacher,
    // This entry is the one place of the TypeORM integration that knows the module's registry of IdServices, so
    // that lib/orm depends on the IdIssuer interface only. Found when the attacher runs: every provider of the app
    // exists by then.
    { provide: SNOWFLAKE_ID_ISSUER, useFactory: registryLookup, inject: [ModuleRef] },
  ],
})
export class SnowflakeTypeOrmModule {}

function registryLookup(moduleRef: ModuleRef): IdIssuerLookup {
  return () => {
    const registry = findRegistry(moduleRef);
    return registry && { get: (name) => registry.get(name), names: () => registry.names() };
  };
}
