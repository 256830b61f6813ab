import { describeInput, kindOf } from '../core/describe-input.js';
import { SnowflakeConfigError } from '../core/errors.js';
import { InvalidSnowflakeTextError } from './form.errors.js';

/** Lower-case letters, digits and inner underscores, starting with a letter, as TypeID and Stripe prefixes are. */
const PREFIX = /^[a-z](?:[a-z0-9_]{0,61}[a-z0-9])?$/;

/**
 * Checks a type prefix (`user`, `ord`) and returns what the text starts with (`user_`), or `''` without one.
 *
 * @throws SnowflakeConfigError naming the option
 * @internal
 */
export function checkPrefix(option: string, prefix: unknown): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new SnowflakeConfigError(
      option,
      `expected 1 to 63 lower-case letters, digits or underscores, starting with a letter and not ending with an ` +
        `underscore, such as 'user' or 'ord' (the separator \`_\` is added); got ${describeInput(prefix)}.`,
    );
  }
  return `${prefix}_`;
}

/**
 * Checks that `text` is a string that starts with `head` (the prefix and its separator) and has `bodyLength`
 * characters after it.
 *
 * @throws InvalidSnowflakeTextError naming the first character that departs from the prefix, or the length
 * @internal
 */
export function checkShape(text: unknown, head: string, bodyLength: number | undefined, form: string): string {
  if (typeof text !== 'string') {
    // The value as given: converting it would run a client's toString (or a Proxy's trap) and could throw a TypeError.
    throw new InvalidSnowflakeTextError(text, form, `expected a string in the ${form} form, got ${kindOf(text)}.`);
  }
  for (let i = 0; i < head.length; i++) {
    if (text[i] !== head[i]) {
      const found = i < text.length ? `${JSON.stringify(text[i])} at position ${i}` : `the text ends at position ${i}`;
      throw new InvalidSnowflakeTextError(
        text,
        form,
        `${found}: expected the prefix ${JSON.stringify(head)}.`,
        i < text.length ? i : undefined,
        i < text.length ? text[i] : undefined,
      );
    }
  }
  const length = text.length - head.length;
  if (bodyLength !== undefined && length !== bodyLength) {
    const extra = length > bodyLength ? head.length + bodyLength : undefined;
    throw new InvalidSnowflakeTextError(
      text,
      form,
      `expected ${bodyLength} characters${head === '' ? '' : ` after ${JSON.stringify(head)}`}, got ${length} ` +
        `(the ${form} form has a fixed width, leading zeros included).`,
      extra,
      extra === undefined ? undefined : text[extra],
    );
  }
  return text;
}
