import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Scalar, type CustomScalar } from '@nestjs/graphql';
import type { ValueNode } from 'graphql';
import { SnowflakeConfigError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import { IdService } from '../module/id.service.js';
import { SNOWFLAKE_GRAPHQL_OPTIONS } from './snowflake-graphql.options.js';
import { SNOWFLAKE_SCALAR_NAME, SnowflakeScalarCodec, type SnowflakeScalarOptions } from './snowflake-scalar.type.js';

/**
 * The `Snowflake` scalar, bound to the layout of the app's `IdService`. Provided by `SnowflakeGraphQLModule`, which
 * registers it with `@nestjs/graphql` for both ways of building a schema:
 * - code first: `@Field(() => SnowflakeScalar) id: bigint`, `@Args('id', { type: () => SnowflakeScalar }) id: bigint`,
 *   `@Field(() => [SnowflakeScalar])` for lists;
 * - schema first: `scalar Snowflake` in the type definitions; the resolver of the scalar is added by itself.
 *
 * Resolvers return IDs as bigints (decimal strings and safe integers, as database drivers give them, are accepted
 * too); clients read decimal strings. Arguments arrive as bigints of the layout: a malformed ID is a validation
 * error with the reason, before any resolver runs.
 *
 * @publicApi
 */
@Scalar(SNOWFLAKE_SCALAR_NAME)
@Injectable()
export class SnowflakeScalar implements CustomScalar<string, bigint>, OnModuleInit {
  /** The scalar's description in the schema. */
  readonly description: string;
  private readonly codec: SnowflakeScalarCodec;
  private ids: IdService | undefined;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Optional() @Inject(SNOWFLAKE_GRAPHQL_OPTIONS) options?: SnowflakeScalarOptions,
  ) {
    this.codec = new SnowflakeScalarCodec(() => this.layout(), options?.form);
    this.description = this.codec.description;
  }

  /** Finds the app's IdService at bootstrap, so that an app without SnowflakeModule fails to start, not on a query. */
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
    try {
      return this.moduleRef.get(IdService, { strict: false });
    } catch {
      throw new SnowflakeConfigError(
        'SnowflakeGraphQLModule',
        'the Snowflake scalar found no IdService in the application: import SnowflakeModule.forRoot() (or ' +
          'forRootAsync()) in the app as well; the scalar checks IDs against its layout.',
      );
    }
  }
}
