import { InvalidSnowflakeError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import type { IdService } from '../module/id.service.js';

/**
 * What `@ToSnowflakeId()` leaves in a field it could not read, so that `@IsSnowflakeId()` reports the input as it came
 * and never mistakes it for an ID already read. Leaving the raw text would be ambiguous: a decimal string is both a
 * converted ID and what a client may send in place of an app's opaque public form.
 *
 * @internal
 */
export class UnreadSnowflakeId {
  constructor(
    /** The input as the client sent it. */
    readonly input: unknown,
  ) {}
}

/** More decimal digits than any 64-bit ID has (20) and some leading zeros: longer text is refused before BigInt. */
const MAX_DECIMAL_TEXT = 40;
const DIGITS = /^[0-9]+$/;

/**
 * The ID a request value stands for, without the layout check (the transform has no layout; the validator checks
 * it): the text in `form`, or without one a decimal string, a safe-integer number or a bigint. Undefined when the
 * value is none of these.
 *
 * @internal
 */
export function readId(value: unknown, form: SnowflakeIdForm | undefined): bigint | undefined {
  if (typeof value === 'bigint') return value >= 0n ? value : undefined;
  if (form !== undefined) {
    if (typeof value !== 'string') return undefined;
    try {
      return form.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof value === 'string') {
    return DIGITS.test(value) && value.length <= MAX_DECIMAL_TEXT ? BigInt(value) : undefined;
  }
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
  return undefined;
}

/**
 * Why a request value is not an ID of the app's layout, or undefined when it is one. The reasons are those of
 * `IdService.decode()` and of the form's `parse()`, so that a field answers as `ParseSnowflakeIdPipe` does.
 *
 * @internal
 */
export function idProblem(value: unknown, form: SnowflakeIdForm | undefined, ids: IdService): string | undefined {
  try {
    if (value instanceof UnreadSnowflakeId) {
      const { input } = value;
      if (form !== undefined && typeof input !== 'string') {
        throw new InvalidSnowflakeError(input, `expected the ${form.name} text of an ID, got ${typeOf(input)}.`);
      }
      ids.decode(form === undefined ? (input as bigint | string | number) : form.parse(input as string));
      // decode() accepts what the transform refused only for decimal text longer than the transform reads (leading
      // zeros past 40 characters): refused all the same, since the field was never read.
      return `${describeInput(input)} is too long for an ID.`;
    }
    if (form !== undefined && typeof value === 'string') {
      ids.decode(form.parse(value));
      return undefined;
    }
    if (form !== undefined && typeof value !== 'bigint') {
      throw new InvalidSnowflakeError(value, `expected the ${form.name} text of an ID, got ${typeOf(value)}.`);
    }
    ids.decode(value as bigint | string | number);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidSnowflakeError) return error.message;
    throw error;
  }
}

function typeOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

function describeInput(input: unknown): string {
  return typeof input === 'string' ? JSON.stringify(input) : String(input);
}
