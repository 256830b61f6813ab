/**
 * The most characters of an input an error message shows. A message names what it refused; repeating it would let a
 * client make every answer as large as its request (a 10 MB string, a million-element array).
 *
 * @internal
 */
export const MAX_SHOWN_CHARS = 40;

/** |n| below this prints in full; a larger bigint's decimal digits would cost time quadratic in its size. */
const LARGEST_SHOWN_BIGINT = 10n ** BigInt(MAX_SHOWN_CHARS);

/**
 * An input as a message shows it, at most about {@link MAX_SHOWN_CHARS} characters whatever its type. Objects are named
 * by their kind, never converted: a `toString` of the client's or a Proxy's trap must neither run nor mask the error.
 *
 * @internal
 */
export function describeInput(input: unknown): string {
  try {
    switch (typeof input) {
      case 'string':
        return JSON.stringify(input.length > MAX_SHOWN_CHARS ? `${input.slice(0, MAX_SHOWN_CHARS)}…` : input);
      case 'bigint':
        return input > -LARGEST_SHOWN_BIGINT && input < LARGEST_SHOWN_BIGINT
          ? `${input}n`
          : `(a bigint of more than ${MAX_SHOWN_CHARS} digits)`;
      case 'number':
        return Object.is(input, -0) ? '-0' : String(input);
      case 'boolean':
      case 'undefined':
        return String(input);
      case 'symbol':
        return cut(input.toString());
      case 'function':
        return '(a function)';
      default:
        if (input === null) return 'null';
        if (input instanceof Date) return Number.isNaN(input.getTime()) ? 'Invalid Date' : input.toISOString();
        return Array.isArray(input) ? '(an array)' : '(an object)';
    }
  } catch {
    // A revoked Proxy throws on `instanceof`; its kind is all there is to say.
    return `(${typeof input})`;
  }
}

/** What a value is, for "expected …, got <kind>" reasons. @internal */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  try {
    if (Array.isArray(value)) return 'an array';
  } catch {
    // A revoked Proxy: fall through to its typeof.
  }
  return typeof value;
}

/** `text`, cut to `max` characters (and an ellipsis). @internal */
export function cut(text: string, max = MAX_SHOWN_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
