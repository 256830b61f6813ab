import { Type, type TransformFnParams } from 'class-transformer';
import { ANY_LAYOUT, parseId } from '../core/codec.js';
import { describeInput, kindOf } from '../core/describe-input.js';
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

/**
 * The ID a request value stands for, without the layout check (the transform has no layout; the validator checks
 * it): the text in `form`, or without one what `decode()` reads (a decimal string, a safe-integer number or a
 * bigint; {@link parseId} is the one reading of all of them). Undefined when the value is none of these.
 *
 * @internal
 */
export function readId(value: unknown, form: SnowflakeIdForm | undefined): bigint | undefined {
  try {
    if (form === undefined) return parseId(value, ANY_LAYOUT);
    // A bigint here is what an earlier read left (a DTO built twice); clients send text.
    if (typeof value === 'bigint') return value >= 0n ? value : undefined;
    return typeof value === 'string' ? form.parse(value) : undefined;
  } catch (error) {
    if (error instanceof InvalidSnowflakeError) return undefined;
    throw error;
  }
}

/**
 * Why a request value is not an ID of the app's layout, or undefined when it is one. The reasons are those of
 * `IdService.decode()` and of the form's `parse()`, so that a field answers as `ParseSnowflakeIdPipe` does.
 *
 * @internal
 */
export function idProblem(value: unknown, form: SnowflakeIdForm | undefined, ids: IdService): string | undefined {
  try {
    const input = isUnread(value) ? value.input : value;
    if (form !== undefined && typeof input === 'string') {
      ids.decode(form.parse(input));
    } else if (form !== undefined && (isUnread(value) || typeof input !== 'bigint')) {
      throw new InvalidSnowflakeError(input, `expected the ${form.name} text of an ID, got ${kindOf(input)}.`);
    } else {
      ids.decode(input as bigint | string | number);
    }
    // The transform and decode() read by one rule, so this is never reached; if it were, the field holds no ID.
    return isUnread(value) ? `Invalid snowflake ID ${describeInput(input)}: it could not be read.` : undefined;
  } catch (error) {
    if (error instanceof InvalidSnowflakeError) return error.message;
    throw error;
  }
}

function isUnread(value: unknown): value is UnreadSnowflakeId {
  try {
    return value instanceof UnreadSnowflakeId;
  } catch {
    // A revoked Proxy throws on `instanceof`: it is not what the transform left.
    return false;
  }
}

/** What class-transformer hands a transform, as far as reading the sent value goes. */
type SentParams = { value: unknown; obj: unknown; key: TransformFnParams['key'] };

/**
 * Undoes what implicit conversion did to a JSON number that cannot be an exact ID (beyond 2^53, or with a fraction).
 * With `enableImplicitConversion`, class-transformer converts a field to its declared type before any `@Transform`
 * runs, and `String(1234567890123456789)` is the all-digit `"1234567890123456800"`, which a `string` field would take
 * for another ID. Only that is undone: the sent number is put back where the value is exactly the string made from
 * it, so that the check refuses it. Anything else stays as it came (what the app's own transforms made of it, and
 * the value of an `@Expose({ name })` field, whose sent key is not the property's).
 *
 * @internal
 */
export function keepInexactNumbers({ value, obj, key }: SentParams): unknown {
  if (obj === null || typeof obj !== 'object' || !Object.hasOwn(obj, key)) return value;
  const sent: unknown = (obj as Record<string, unknown>)[key];
  const undone = (item: unknown, sentItem: unknown): unknown =>
    typeof sentItem === 'number' && !Number.isSafeInteger(sentItem) && item === String(sentItem) ? sentItem : item;
  if (Array.isArray(sent) && Array.isArray(value) && sent.length === value.length) {
    const sentItems: readonly unknown[] = sent;
    const items: readonly unknown[] = value;
    return items.some((item, i) => undone(item, sentItems[i]) !== item)
      ? items.map((item, i) => undone(item, sentItems[i]))
      : value;
  }
  return undone(value, sent);
}

/**
 * A field is left unconverted by implicit conversion (`@Type(() => Object)`, which class-transformer reads before
 * `design:type`) when it is declared as one of `types`: it would build a `bigint` field with `new BigInt()`, which
 * throws for every input ("BigInt is not a constructor"), a 500; and it would turn a rounded JSON number into an
 * all-digit string in a `string` field, which no later transform can tell from an ID sent as text when the field's
 * key in the body is another (`@Expose({ name })`). `design:type` itself stays as declared, for GraphQL and Swagger.
 * The ID decorators read and check the value themselves.
 *
 * @internal
 */
export function leaveUnconverted(target: object, property: string | symbol, types: readonly unknown[]): void {
  const reflect = Reflect as {
    getMetadata?: typeof Reflect.getMetadata;
    defineMetadata?: typeof Reflect.defineMetadata;
  };
  const declared: unknown = reflect.getMetadata?.('design:type', target, property);
  if (!types.includes(declared)) return;
  // `@Type()` also records the field's `design:type` as it finds it, and class-transformer builds an array sent to the
  // field from that (`new BigInt()` again): it is shown `Object` for that moment, then the declared type again.
  reflect.defineMetadata?.('design:type', Object, target, property);
  try {
    Type(() => Object)(target, property);
  } finally {
    reflect.defineMetadata?.('design:type', declared, target, property);
  }
}
