import { SnowflakeConfigError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { rejectUnknownKeys } from '../core/option-checks.js';
import type { SnowflakeScalarOptions } from './snowflake-scalar.type.js';

/** The options given to `SnowflakeGraphQLModule.forRoot()`, checked. @internal */
export const SNOWFLAKE_GRAPHQL_OPTIONS = 'nestjs-snowflake:graphql-options';

const SCALAR_OPTION_KEYS = ['form'] as const satisfies readonly (keyof SnowflakeScalarOptions)[];

/**
 * Checks the scalar's options once, when the module is built (or the scalar created): a misspelt key or a form
 * without its functions fails there, naming the option, rather than on the first query.
 *
 * @internal
 */
export function checkScalarOptions(options: SnowflakeScalarOptions | undefined, owner: string): SnowflakeScalarOptions {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('options', `${owner} expected an object, such as {} or { form }.`);
  }
  rejectUnknownKeys('', options, SCALAR_OPTION_KEYS, owner);
  const form = options.form as Partial<SnowflakeIdForm> | null | undefined;
  if (form === undefined) return { form: undefined };
  if (
    form === null ||
    typeof form !== 'object' ||
    typeof form.name !== 'string' ||
    typeof form.format !== 'function' ||
    typeof form.parse !== 'function'
  ) {
    throw new SnowflakeConfigError(
      'form',
      'expected a SnowflakeIdForm, an object with `name`, `format(id)` and `parse(text)`; leave it out for decimal strings.',
    );
  }
  return { form: form as SnowflakeIdForm };
}
