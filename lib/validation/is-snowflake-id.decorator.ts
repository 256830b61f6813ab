import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationOptions } from 'class-validator';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { checkIdForm } from '../core/id-form.check.js';
import { rejectUnknownKeys } from '../core/option-checks.js';
import { generatorOption } from '../module/snowflake.names.js';
import { keepInexactNumbers, leaveUnconverted } from './id-reading.js';
import { SnowflakeIdConstraint, type SnowflakeIdConstraintArgs } from './snowflake-id.constraint.js';

/** What implicit conversion made of a JSON number that cannot be an exact ID is undone, so that the check sees it. */
const keepInexact = Transform(keepInexactNumbers, { toClassOnly: true });

/**
 * Options of {@link IsSnowflakeId}: class-validator's own (`each`, `message`, `groups`, `always`, `context`) and the
 * text form.
 *
 * @publicApi
 */
export interface IsSnowflakeIdOptions extends ValidationOptions {
  /**
   * The text form of a field kept as text (without {@link ToSnowflakeId}). With `@ToSnowflakeId()`, give the form to
   * it instead: this check reads the form from there. @default the decimal string
   */
  form?: SnowflakeIdForm;
  /**
   * The name of the `SnowflakeModule` registration whose layout the field's IDs follow
   * (`SnowflakeModule.forRoot({ name })`). A name the app does not register fails the first validation with an
   * `UnknownGeneratorError` listing the names it does (a DTO is declared before any app exists).
   * @default the default registration
   */
  generator?: string;
}

const KNOWN_KEYS = ['form', 'generator', 'each', 'message', 'groups', 'always', 'context', 'validateIf'] as const;

/**
 * The field holds an ID of the app's layout: a bigint or decimal string (or the app's text form) that is not
 * negative, not a number beyond 2^53 (already rounded by JSON), and not wider than the layout. The message names the
 * field and the reason, as `ParseSnowflakeIdPipe` does: `userId: Invalid snowflake ID "12ab": expected …`. With
 * `each: true` the field must be an array (or a Set or Map, as class-validator iterates them): a single ID is refused.
 *
 * The layout is the app's: import `SnowflakeValidationModule` and call
 * `useContainer(app.select(AppModule), { fallbackOnErrors: true })` from class-validator. Without that, the check
 * reads the `IdService` running in the process (one app, or apps of one layout).
 *
 * @example
 * ```ts
 * class ListOrders {
 *   @IsOptional() @IsSnowflakeId() @ToSnowflakeId() after?: bigint;
 *   @IsSnowflakeId({ each: true }) @ToSnowflakeId({ each: true }) ids!: bigint[];
 * }
 * ```
 *
 * @publicApi
 */
export function IsSnowflakeId(options: IsSnowflakeIdOptions = {}): PropertyDecorator {
  rejectUnknownKeys('', options, KNOWN_KEYS, '@IsSnowflakeId()');
  const { form, generator, ...validationOptions } = options;
  const constraint: SnowflakeIdConstraintArgs = {
    form: checkIdForm(form, '@IsSnowflakeId()'),
    generator: generatorOption(generator, '@IsSnowflakeId()'),
    each: options.each === true,
  };
  return (target, property) => {
    keepInexact(target, property);
    leaveUnconverted(target, property, [BigInt]);
    registerDecorator({
      name: 'isSnowflakeId',
      target: target.constructor,
      propertyName: String(property),
      constraints: [constraint],
      options: validationOptions,
      validator: SnowflakeIdConstraint,
    });
  };
}
