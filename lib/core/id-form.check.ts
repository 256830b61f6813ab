import { SnowflakeConfigError } from './errors.js';
import type { SnowflakeIdForm } from './id-form.js';

/**
 * Checks a `form` option where it is given (a module built, a decorator applied): something that is not a
 * {@link SnowflakeIdForm} would otherwise fail as a TypeError on the first request that reads an ID.
 *
 * @internal
 */
export function checkIdForm(form: unknown, owner: string): SnowflakeIdForm | undefined {
  if (form === undefined) return undefined;
  const given = form as Partial<SnowflakeIdForm> | null;
  if (
    given === null ||
    typeof given !== 'object' ||
    typeof given.name !== 'string' ||
    typeof given.format !== 'function' ||
    typeof given.parse !== 'function'
  ) {
    throw new SnowflakeConfigError(
      'form',
      `${owner} expected a SnowflakeIdForm, an object with \`name\`, \`format(id)\` and \`parse(text)\`; leave it ` +
        'out for decimal strings.',
    );
  }
  return given as SnowflakeIdForm;
}
