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
  if (!isIdForm(form)) {
    throw new SnowflakeConfigError(
      'form',
      `${owner} expected a SnowflakeIdForm, an object with \`name\`, \`format(id)\` and \`parse(text)\`; leave it ` +
        'out for decimal strings.',
    );
  }
  return form;
}

function isIdForm(value: unknown): value is SnowflakeIdForm {
  if (typeof value !== 'object' || value === null) return false;
  const { name, format, parse } = value as Record<string, unknown>;
  return typeof name === 'string' && typeof format === 'function' && typeof parse === 'function';
}
