/**
 * `nestjs-snowflake/graphql`: the `Snowflake` scalar and the error mapping for `@nestjs/graphql` (Apollo or
 * Mercurius). A separate entry point, so that `@nestjs/graphql` and `graphql` stay optional peers: the main entry
 * never imports them.
 */
export {
  formatSnowflakeGraphQLError,
  snowflakeGraphQLError,
  type SnowflakeGraphQLErrorCode,
} from './graphql/snowflake-graphql.errors.js';
export { SnowflakeGraphQLExceptionFilter } from './graphql/snowflake-graphql-exception.filter.js';
export { SnowflakeGraphQLModule } from './graphql/snowflake-graphql.module.js';
export type { SnowflakeGraphQLOptions } from './graphql/snowflake-graphql.options.js';
export {
  createSnowflakeScalar,
  type CreateSnowflakeScalarOptions,
  type SnowflakeScalarOptions,
} from './graphql/snowflake-scalar.type.js';
export { defineSnowflakeScalar, SnowflakeScalar } from './graphql/snowflake.scalar.js';
