import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { parseId } from '../core/codec.js';
import { kindOf } from '../core/describe-input.js';
import { InvalidSnowflakeError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import type { Layout } from '../core/layout.js';
import { checkScalarName, checkScalarOptions } from './snowflake-graphql.options.js';

/**
 * Options of {@link createSnowflakeScalar} and of `SnowflakeGraphQLModule.forRoot()`.
 *
 * @publicApi
 */
export interface SnowflakeScalarOptions {
  /**
   * The text form IDs take in the API: serialised with `form.format(id)`, read back with `form.parse(text)`, then
   * checked against the layout. With a form, only strings are accepted as input (a number is not a text of the form).
   * @default the decimal string, with safe-integer numbers accepted as input too
   */
  form?: SnowflakeIdForm;
}

/**
 * Options of {@link createSnowflakeScalar}: those of the scalar, and its name in the schema.
 *
 * @publicApi
 */
export interface CreateSnowflakeScalarOptions extends SnowflakeScalarOptions {
  /**
   * The scalar's name in the schema, for a second ID space with a layout of its own (`scalar OrderId`).
   * @default 'Snowflake'
   */
  name?: string;
}

/** The name of the scalar in the schema: `scalar Snowflake`. */
export const SNOWFLAKE_SCALAR_NAME = 'Snowflake';

/**
 * The conversions of the `Snowflake` scalar for one layout, shared by the standalone scalar type and the Nest
 * `@Scalar()` class. Input errors are the library's `InvalidSnowflakeError`, so graphql-js reports them as
 * validation errors with their reason and keeps them as `originalError` for error formatters; output errors are
 * GraphQL errors of their own, since a value the server produced is never the client's mistake.
 *
 * @internal
 */
export class SnowflakeScalarCodec {
  constructor(
    private readonly layout: () => Layout,
    private readonly form: SnowflakeIdForm | undefined,
    /** The scalar's name in the schema, for the messages. */
    private readonly typeName: string = SNOWFLAKE_SCALAR_NAME,
  ) {}

  get description(): string {
    const written =
      this.form === undefined
        ? 'a decimal string (exact in JSON and JavaScript, unlike a number beyond 2^53); input may also be a safe integer'
        : `a string in the ${this.form.name} form`;
    return `A snowflake ID: a 64-bit, time-ordered integer, written as ${written}.`;
  }

  /** An ID a resolver returned (a bigint, a decimal string from a driver, or a safe integer) → its text. */
  serialize(value: unknown): string {
    let id: bigint;
    try {
      id = parseId(value instanceof BigInt ? value.valueOf() : value, this.layout());
    } catch (error) {
      if (!(error instanceof InvalidSnowflakeError)) throw error;
      throw new GraphQLError(`${this.typeName} cannot represent the value a resolver returned: ${error.message}`, {
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      });
    }
    return this.form === undefined ? id.toString() : this.form.format(id);
  }

  /** A variable's value (JSON: a string, or a number) → a bigint of the layout. */
  parseValue(value: unknown): bigint {
    if (typeof value === 'string') return this.parseText(value);
    if (typeof value === 'number' || typeof value === 'bigint') {
      if (this.form !== undefined) throw this.notText(value);
      return parseId(value, this.layout());
    }
    throw new InvalidSnowflakeError(value, this.expected(kindOf(value)));
  }

  /** A value written in the query itself → a bigint of the layout. */
  parseLiteral(node: ValueNode): bigint {
    if (node.kind === Kind.STRING) return this.parseText(node.value);
    if (node.kind === Kind.INT) {
      if (this.form !== undefined) throw this.notText(node.value, 'an int value');
      // The literal's digits are exact, but the same ID in a variable would already be rounded by JSON: one rule for
      // both, so that clients learn to write large IDs as strings. The refusal names the literal as written.
      const value = Number(node.value);
      if (!Number.isSafeInteger(value)) {
        throw new InvalidSnowflakeError(
          node.value,
          'an int value beyond 2^53 is refused, as the same number in a variable would arrive rounded; write the ID as a string.',
        );
      }
      return parseId(value, this.layout());
    }
    // Named by its kind, never printed: a list literal of a megabyte would be printed in full only to be cut.
    const shown =
      node.kind === Kind.FLOAT || node.kind === Kind.ENUM || node.kind === Kind.BOOLEAN
        ? node.value
        : node.kind === Kind.NULL
          ? null
          : node;
    throw new InvalidSnowflakeError(shown, this.expected(node.kind.toLowerCase().replace('value', ' value')));
  }

  private parseText(text: string): bigint {
    return parseId(this.form === undefined ? text : this.form.parse(text), this.layout());
  }

  private notText(value: unknown, kind = kindOf(value)): InvalidSnowflakeError {
    return new InvalidSnowflakeError(value, `expected a string in the ${this.form!.name} form, got ${kind}.`);
  }

  private expected(got: string): string {
    return this.form === undefined
      ? `expected a decimal string or a safe integer, got ${got}.`
      : `expected a string in the ${this.form.name} form, got ${got}.`;
  }
}

/**
 * A `Snowflake` scalar type for a layout, for schema-first resolver maps built by hand
 * (`resolvers: { Snowflake: createSnowflakeScalar(ids.layout) }`) and code-first fields
 * (`@Field(() => scalar)`) where the layout is known when the schema is declared. In a Nest app,
 * `SnowflakeGraphQLModule` does the same for both ways, bound to the app's `IdService`. `name` gives a second scalar
 * (`OrderId`) for the IDs of another layout.
 *
 * It serialises a bigint (or a decimal string, or a safe integer, as drivers return them) to the ID's text, and
 * parses a string (or a safe integer) into a bigint, refusing letters, negative values, numbers beyond 2^53 and IDs
 * wider than the layout with a validation error that gives the reason.
 *
 * @example
 * ```ts
 * GraphQLModule.forRootAsync<ApolloDriverConfig>({
 *   driver: ApolloDriver,
 *   inject: [IdService],
 *   useFactory: (ids: IdService) => ({ typeDefs, resolvers: { Snowflake: createSnowflakeScalar(ids.layout) } }),
 * });
 * ```
 *
 * @publicApi
 */
export function createSnowflakeScalar(
  layout: Layout,
  options: CreateSnowflakeScalarOptions = {},
): GraphQLScalarType<bigint, string> {
  const { form } = checkScalarOptions(options, 'createSnowflakeScalar()', ['name']);
  const name =
    options.name === undefined ? SNOWFLAKE_SCALAR_NAME : checkScalarName(options.name, 'createSnowflakeScalar()');
  const codec = new SnowflakeScalarCodec(() => layout, form, name);
  return new GraphQLScalarType<bigint, string>({
    name,
    description: codec.description,
    serialize: (value) => codec.serialize(value),
    parseValue: (value) => codec.parseValue(value),
    parseLiteral: (node) => codec.parseLiteral(node),
  });
}
