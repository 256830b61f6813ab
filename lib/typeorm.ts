/**
 * `nestjs-snowflake/typeorm`: `@GeneratedId()` for TypeORM entities. A separate entry point, so that `typeorm` stays
 * an optional peer and an app without TypeORM never loads the DataSource discovery.
 */
import { Module } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { IdService } from './module/id.service.js';
import { SNOWFLAKE_ID_ISSUER, TypeOrmAttacher, type IdIssuerLookup } from './orm/typeorm/typeorm-attacher.service.js';

export type { IdIssuer } from './orm/id-issuer.js';
export { attachGeneratedIds, type AttachGeneratedIdsOptions } from './orm/typeorm/generated-id.attach.js';
export { GeneratedId } from './orm/typeorm/generated-id.decorator.js';
export {
  DataSourceNotInitializedError,
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
 * SnowflakeModule need not be global: the module finds the app's `IdService` wherever it is registered.
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
    // This entry is the one place of the TypeORM integration that knows IdService, so that lib/orm depends on the
    // IdIssuer interface only. Found when the attacher runs: every provider of the app exists by then.
    { provide: SNOWFLAKE_ID_ISSUER, useFactory: idServiceLookup, inject: [ModuleRef] },
  ],
})
export class SnowflakeTypeOrmModule {}

function idServiceLookup(moduleRef: ModuleRef): IdIssuerLookup {
  return () => {
    try {
      return moduleRef.get(IdService, { strict: false });
    } catch {
      return undefined;
    }
  };
}
