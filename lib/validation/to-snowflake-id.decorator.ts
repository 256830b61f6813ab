import { Transform, type TransformFnParams } from 'class-transformer';
import { rejectUnknownKeys } from '../core/option-checks.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { SnowflakeConfigError } from '../core/errors.js';
import { checkIdForm } from '../core/id-form.check.js';
import { keepInexactNumbers, leaveUnconverted, readId, UnreadSnowflakeId } from './id-reading.js';
import { writeMetadata } from './to-snowflake-id.metadata.js';

/**
 * Options of {@link ToSnowflakeId}.
 *
 * @publicApi
 */
export interface ToSnowflakeIdOptions {
  /** What the field holds once read: the ID as a bigint, or as its decimal string. @default 'bigint' */
  to?: 'bigint' | 'string';
  /** The text form clients send. @default the decimal string (a safe-integer JSON number is read too) */
  form?: SnowflakeIdForm;
  /** Read each element of an array (pair with `@IsSnowflakeId({ each: true })`). @default false */
  each?: boolean;
}

const KNOWN_KEYS = ['to', 'form', 'each'] as const;

/**
 * Turns an ID sent as text (or a safe-integer JSON number) into a bigint, or into its decimal string, when
 * class-transformer builds the DTO (`ValidationPipe({ transform: true })`). It only reads: pair it with
 * {@link IsSnowflakeId}, which checks the app's layout and answers 400 with the reason for what could not be read.
 * `null` and `undefined` are left as they are, for `@IsOptional()`.
 *
 * @example
 * ```ts
 * class CreateOrder {
 *   @IsSnowflakeId() @ToSnowflakeId() userId!: bigint;
 * }
 * ```
 *
 * @publicApi
 */
export function ToSnowflakeId(options: ToSnowflakeIdOptions = {}): PropertyDecorator {
  rejectUnknownKeys('', options, KNOWN_KEYS, '@ToSnowflakeId()');
  const to = options.to ?? 'bigint';
  if (to !== 'bigint' && to !== 'string') {
    throw new SnowflakeConfigError('to', `@ToSnowflakeId() reads IDs to 'bigint' or 'string', got ${String(to)}.`);
  }
  const form = checkIdForm(options.form, '@ToSnowflakeId()');
  if (options.each !== undefined && typeof options.each !== 'boolean') {
    throw new SnowflakeConfigError('each', `@ToSnowflakeId() expected true or false, got ${String(options.each)}.`);
  }
  const read = (value: unknown): unknown => {
    if (value === undefined || value === null) return value;
    const id = readId(value, form);
    if (id === undefined) return new UnreadSnowflakeId(value);
    return to === 'bigint' ? id : id.toString();
  };
  const transform = Transform(
    (params: TransformFnParams) => {
      const value = keepInexactNumbers(params);
      return options.each === true && Array.isArray(value) ? value.map(read) : read(value);
    },
    { toClassOnly: true },
  );
  return (target, property) => {
    writeMetadata(target, property, { form, to });
    transform(target, property);
    leaveUnconverted(target, property, [BigInt, String]);
  };
}
