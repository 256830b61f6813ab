import { Module, type DynamicModule } from '@nestjs/common';
import {
  SNOWFLAKE_GRAPHQL_OPTIONS,
  checkGraphQLOptions,
  type SnowflakeGraphQLOptions,
} from './snowflake-graphql.options.js';
import { SnowflakeScalar } from './snowflake.scalar.js';

/**
 * Provides the `Snowflake` scalar ({@link SnowflakeScalar}) to `@nestjs/graphql`, bound to the layout of the app's
 * `IdService`: import it beside `SnowflakeModule` and `GraphQLModule`. Code-first fields and arguments then use
 * `() => SnowflakeScalar`; schema-first type definitions declare `scalar Snowflake`. Import the class for decimal
 * strings, or `SnowflakeGraphQLModule.forRoot({ form })` for another text form.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [
 *     SnowflakeModule.forRoot({ workerId: 1 }),
 *     SnowflakeGraphQLModule,
 *     GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
 *   ],
 *   providers: [OrdersResolver, { provide: APP_FILTER, useClass: SnowflakeGraphQLExceptionFilter }],
 * })
 * export class AppModule {}
 * ```
 *
 * @publicApi
 */
@Module({ providers: [SnowflakeScalar], exports: [SnowflakeScalar] })
export class SnowflakeGraphQLModule {
  /**
   * The scalar with options: `form` for IDs written in another text form than the decimal string, `generator` for the
   * layout of a named registration (`SnowflakeModule.forRoot({ name })`) rather than the default one.
   */
  static forRoot(options: SnowflakeGraphQLOptions = {}): DynamicModule {
    return {
      module: SnowflakeGraphQLModule,
      // Checked while the module is built, so that bad options fail at bootstrap, naming the option.
      providers: [
        {
          provide: SNOWFLAKE_GRAPHQL_OPTIONS,
          useFactory: () => checkGraphQLOptions(options, 'SnowflakeGraphQLModule'),
        },
      ],
    };
  }
}
