import { SnowflakeConfigError } from '../core/errors.js';
import { checkIdForm } from '../core/id-form.check.js';
import { rejectUnknownKeys } from '../core/option-checks.js';
import { generatorOption } from '../module/snowflake.names.js';
import type { SnowflakeScalarOptions } from './snowflake-scalar.type.js';

/** The options given to `SnowflakeGraphQLModule.forRoot()`, checked. @internal */
export const SNOWFLAKE_GRAPHQL_OPTIONS = 'nestjs-snowflake:graphql-options';

/**
 * Options of `SnowflakeGraphQLModule.forRoot()` and {@link defineSnowflakeScalar}: the scalar's text form, and the
 * registration whose layout it checks IDs against.
 *
 * @publicApi
 */
export interface SnowflakeGraphQLOptions extends SnowflakeScalarOptions {
  /**
   * The name of the `SnowflakeModule` registration whose layout the scalar follows
   * (`SnowflakeModule.forRoot({ name })`). An app registering no such name fails at bootstrap with an
   * `UnknownGeneratorError` listing the names it does register.
   * @default the default registration
   */
  generator?: string;
}

const SCALAR_OPTION_KEYS = ['form'] as const satisfies readonly (keyof SnowflakeScalarOptions)[];

/**
 * Checks the scalar's options once, when the module is built (or the scalar created): a misspelt key or a form
 * without its functions fails there, naming the option, rather than on the first query. `extraKeys` are the options
 * the caller checks itself.
 *
 * @internal
 */
export function checkScalarOptions(
  options: SnowflakeScalarOptions | undefined,
  owner: string,
  extraKeys: readonly string[] = [],
): SnowflakeScalarOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('options', `${owner} expected an object, such as {} or { form }.`);
  }
  rejectUnknownKeys('', options, [...SCALAR_OPTION_KEYS, ...extraKeys], owner);
  return { form: checkIdForm(options.form, owner) };
}

/** The options of a scalar bound to a registration, checked. @internal */
export function checkGraphQLOptions(
  options: SnowflakeGraphQLOptions | undefined,
  owner: string,
): SnowflakeGraphQLOptions {
  const { form } = checkScalarOptions(options, owner, ['generator']);
  return { form, generator: generatorOption(options?.generator, owner) };
}

/** A GraphQL type name, as the specification allows them; names starting with `__` are reserved to introspection. */
const TYPE_NAME = /^(?!__)[_A-Za-z][_0-9A-Za-z]*$/;

/** Checks the name a scalar type is given in the schema. @internal */
export function checkScalarName(name: unknown, owner: string): string {
  if (typeof name !== 'string' || !TYPE_NAME.test(name)) {
    throw new SnowflakeConfigError(
      'name',
      `${owner} expected a GraphQL type name such as 'OrderId' (letters, digits and '_', not starting with a ` +
        `digit or '__'), got ${JSON.stringify(name) ?? `a ${typeof name}`}.`,
    );
  }
  return name;
}
