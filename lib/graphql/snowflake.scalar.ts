import { Inject, Injectable, Optional, type OnModuleInit, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Scalar, type CustomScalar } from '@nestjs/graphql';
import type { ValueNode } from 'graphql';
import { SnowflakeConfigError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import type { IdService } from '../module/id.service.js';
import { findIdService } from '../module/snowflake.registry.js';
import {
  SNOWFLAKE_GRAPHQL_OPTIONS,
  checkGraphQLOptions,
  checkScalarName,
  type SnowflakeGraphQLOptions,
} from './snowflake-graphql.options.js';
import { SNOWFLAKE_SCALAR_NAME, SnowflakeScalarCodec } from './snowflake-scalar.type.js';

/**
 * What a Nest scalar of snowflake IDs does, whatever its name in the schema: it converts with the layout of one
 * registration's `IdService`, found at bootstrap.
 */
abstract class SnowflakeScalarBinding implements CustomScalar<string, bigint>, OnModuleInit {
  /** The scalar's description in the schema. */
  readonly description: string;
  private readonly codec: SnowflakeScalarCodec;
  private ids: IdService | undefined;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly options: SnowflakeGraphQLOptions,
    private readonly typeName: string,
  ) {
    this.codec = new SnowflakeScalarCodec(() => this.layout(), options.form, typeName);
    this.description = this.codec.description;
  }

  /**
   * Finds the registration's IdService at bootstrap, so that an app without SnowflakeModule, or without the
   * registration named `generator`, fails to start rather than on a query.
   */
  onModuleInit(): void {
    this.layout();
  }

  serialize(value: unknown): string {
    return this.codec.serialize(value);
  }

  parseValue(value: unknown): bigint {
    return this.codec.parseValue(value);
  }

  parseLiteral(node: ValueNode): bigint {
    return this.codec.parseLiteral(node);
  }

  /** Found across modules, so that SnowflakeModule need not be global for the scalar to see it. */
  private layout(): Layout {
    this.ids ??= this.findIdService();
    return this.ids.layout;
  }

  private findIdService(): IdService {
    const found = findIdService(this.moduleRef, this.options.generator, `The GraphQL scalar ${this.typeName}`);
    if (found !== undefined) return found;
    throw new SnowflakeConfigError(
      'SnowflakeGraphQLModule',
      `the ${this.typeName} scalar found no IdService in the application: import SnowflakeModule.forRoot() (or ` +
        'forRootAsync()) in the app as well; the scalar checks IDs against its layout.',
    );
  }
}

/**
 * The `Snowflake` scalar, bound to the layout of the app's `IdService` (of the registration named `generator` with
 * `SnowflakeGraphQLModule.forRoot({ generator })`). Provided by `SnowflakeGraphQLModule`, which registers it with
 * `@nestjs/graphql` for both ways of building a schema:
 * - code first: `@Field(() => SnowflakeScalar) id: bigint`, `@Args('id', { type: () => SnowflakeScalar }) id: bigint`,
 *   `@Field(() => [SnowflakeScalar])` for lists;
 * - schema first: `scalar Snowflake` in the type definitions; the resolver of the scalar is added by itself.
 *
 * Resolvers return IDs as bigints (decimal strings and safe integers, as database drivers give them, are accepted
 * too); clients read decimal strings. Arguments arrive as bigints of the layout: a malformed ID is a validation
 * error with the reason, before any resolver runs. For the IDs of a second registration, see
 * {@link defineSnowflakeScalar}.
 *
 * @publicApi
 */
@Scalar(SNOWFLAKE_SCALAR_NAME)
@Injectable()
export class SnowflakeScalar extends SnowflakeScalarBinding {
  constructor(moduleRef: ModuleRef, @Optional() @Inject(SNOWFLAKE_GRAPHQL_OPTIONS) options?: SnowflakeGraphQLOptions) {
    super(moduleRef, options ?? {}, SNOWFLAKE_SCALAR_NAME);
  }
}

/**
 * A scalar of another name for the IDs of another registration, in an app with two ID spaces
 * (`SnowflakeModule.forRoot({ name: 'orders', … })`): a class to provide in a module of the app and to use as
 * `SnowflakeScalar` is (`@Field(() => OrderIdScalar)`, `scalar OrderId` in type definitions). It checks IDs against
 * the layout of the registration named `generator`, found at bootstrap: an app without it fails to start with an
 * `UnknownGeneratorError`. Options are checked when the class is defined.
 *
 * @example
 * ```ts
 * export const OrderIdScalar = defineSnowflakeScalar('OrderId', { generator: 'orders' });
 * ```
 *
 * @publicApi
 */
export function defineSnowflakeScalar(
  name: string,
  options: SnowflakeGraphQLOptions = {},
): Type<CustomScalar<string, bigint>> {
  const owner = `defineSnowflakeScalar(${JSON.stringify(name)})`;
  const typeName = checkScalarName(name, 'defineSnowflakeScalar()');
  const checked = checkGraphQLOptions(options, owner);

  @Scalar(typeName)
  @Injectable()
  class DefinedSnowflakeScalar extends SnowflakeScalarBinding {
    constructor(@Inject(ModuleRef) moduleRef: ModuleRef) {
      super(moduleRef, checked, typeName);
    }
  }
  // Nest names a provider by its class in errors and logs.
  Object.defineProperty(DefinedSnowflakeScalar, 'name', { value: `${typeName}Scalar` });
  return DefinedSnowflakeScalar;
}
