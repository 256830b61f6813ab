/**
 * Injection tokens of the module's parts, namespaced so that they never meet an app's own. `IdService` is the
 * facade; these let an app (or a test) reach the parts behind it.
 */

/** The validated settings (`SnowflakeSettings`). @internal */
export const SNOWFLAKE_SETTINGS = 'nestjs-snowflake:settings';

/** The generator (`SnowflakeGenerator`) behind `IdService`. @publicApi */
export const SNOWFLAKE_GENERATOR = 'nestjs-snowflake:generator';

/** The worker-ID source in use (`WorkerIdSource`): static, host name, the Redis lease, or the app's own. @publicApi */
export const SNOWFLAKE_WORKER_SOURCE = 'nestjs-snowflake:worker-source';

/** The binding between the source and the generator (`WorkerBinding`). @internal */
export const SNOWFLAKE_BINDING = 'nestjs-snowflake:binding';

/** The public-ID form (`PublicIdForm`), or null without `publicIds`. @internal */
export const SNOWFLAKE_PUBLIC_IDS = 'nestjs-snowflake:public-ids';
/**
 * The name of the registration made without one. `SnowflakeModule.forRoot({ name: 'default' })` is that
 * registration too, as with @nestjs/typeorm's default DataSource.
 *
 * @publicApi
 */
export const DEFAULT_GENERATOR_NAME = 'default';

/** The registration's name (`'default'` without one). @internal */
export const SNOWFLAKE_NAME = 'nestjs-snowflake:name';

/** The registration's entry in the app's registry of generators. @internal */
export const SNOWFLAKE_REGISTRATION = 'nestjs-snowflake:registration';
