/** Errors of what callers hand in: options, IDs, shard keys, and a layout too wide for a number. */
import { describeInput } from './describe-input.js';
import { SnowflakeError } from './base.errors.js';

/**
 * Invalid module or layout options, thrown once at bootstrap naming the option and the fix; or a call's argument of
 * the wrong kind (a batch `count`, call `options` that are no object, `timeoutMs`), thrown by that call.
 *
 * @publicApi
 */
export class SnowflakeConfigError extends SnowflakeError {
  constructor(
    /** The option that is wrong, as a path such as `layout.sequenceBits`. */
    readonly option: string,
    message: string,
  ) {
    super(`Invalid snowflake option \`${option}\`: ${message}`);
  }
}

/**
 * An ID passed to `decode()` (or a part passed to `compose()`) that is not a valid ID of the layout.
 *
 * @publicApi
 */
export class InvalidSnowflakeError extends SnowflakeError {
  constructor(
    /** The rejected input, as given. */
    readonly input: unknown,
    reason: string,
    /** What the input was meant to be: an ID, or an instant to turn into ID bounds. */
    what: 'snowflake ID' | 'instant' = 'snowflake ID',
  ) {
    super(`Invalid ${what} ${describeInput(input)}: ${reason}`);
  }
}

/**
 * `nextNumber()` was called (or configured) on a layout wider than 53 bits, whose IDs do not fit a JS number exactly.
 *
 * @publicApi
 */
export class UnsafeNumberError extends SnowflakeError {
  constructor(readonly layoutBits: number) {
    super(
      `IDs of this layout use ${layoutBits} bits, more than the 53 a JS number holds exactly. ` +
        'Use next() (bigint) or nextString(), or the `js-safe` preset.',
    );
  }
}

/**
 * A shard key that has no stable canonical form (a fraction, an unsafe number, an object, `null`), or a shard key
 * given to a layout without a shard field. See `ShardKey` for the keys that are taken and how each is hashed.
 *
 * @publicApi
 */
export class InvalidShardKeyError extends SnowflakeError {
  constructor(
    /** The rejected key, as given. */
    readonly key: unknown,
    reason: string,
  ) {
    super(`Invalid shard key ${describeKey(key)}: ${reason}`);
  }
}

/**
 * A row whose ID takes its shard from another property (`@GeneratedId({ shardFrom })`, the Prisma extension's
 * `shardFrom`) reached an insert without that property. Its ID would silently land in shard 0, away from the other
 * rows of its key, so the insert fails instead.
 *
 * @publicApi
 */
export class ShardKeyMissingError extends SnowflakeError {
  constructor(
    /** The entity or model, as `Entity.property`, whose ID was to be filled. */
    readonly target: string,
    /** The property that gives the shard key. */
    readonly shardFrom: string,
    advice: string,
  ) {
    super(`Cannot fill ${target}: its shard comes from \`${shardFrom}\`, which the row does not set. ${advice}`);
  }
}

function describeKey(key: unknown): string {
  if (key === null || key === undefined) return String(key);
  if (typeof key === 'object') return key instanceof Uint8Array ? 'bytes' : `(${key.constructor?.name ?? 'object'})`;
  return `${describeInput(key)} (${typeof key})`;
}
