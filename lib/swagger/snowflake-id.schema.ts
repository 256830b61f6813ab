import type { SnowflakeIdForm } from '../core/id-form.js';

/**
 * The OpenAPI schema of an ID in its decimal form, as the app sends it (`BigIntSerializerInterceptor`,
 * `snowflakeJsonReplacer`) and reads it (`ParseSnowflakeIdPipe`, `@IsSnowflakeId()`): a string of digits, with the
 * `int64` format as a hint of what it stands for (the convention of Google's APIs for 64-bit integers in JSON).
 * Documented as `integer`, generated clients (openapi-typescript, openapi-generator, orval) would type it as a number
 * and round IDs above 2^53. Use it where a decorator cannot go: `@ApiResponse({ schema: … })`, hand-written documents.
 *
 * @publicApi
 */
export const SNOWFLAKE_ID_SCHEMA = Object.freeze({
  type: 'string',
  format: 'int64',
  // Leading zeros at any length, as every reader of the library takes them; 19 digits after them at most.
  pattern: '^0*[0-9]{1,19}$',
  example: '2125018075706167296',
  description: 'A snowflake ID: a 64-bit integer written as a decimal string, so that no client rounds it.',
} as const);

/**
 * A text form, whose pattern (`SnowflakeIdForm.pattern`, or a regular expression) goes into the document. The forms
 * of `nestjs-snowflake` state theirs; a form without one is documented by its example and name alone.
 *
 * @publicApi
 */
export type DocumentedIdForm = Omit<SnowflakeIdForm, 'pattern'> & { readonly pattern?: RegExp | string };

/** An ID of a few parts set, for the example of a form: what a real ID looks like, not 0. */
const EXAMPLE_ID = BigInt(SNOWFLAKE_ID_SCHEMA.example);

/**
 * The schema of an ID in a text form of the app's: a string, with the form's pattern when it states one and an
 * example written by the form. The decimal form (no form) gives {@link SNOWFLAKE_ID_SCHEMA}.
 *
 * @publicApi
 */
export function snowflakeIdSchema(form?: DocumentedIdForm): SnowflakeIdSchema {
  if (form === undefined) return { ...SNOWFLAKE_ID_SCHEMA };
  const pattern = form.pattern instanceof RegExp ? form.pattern.source : form.pattern;
  return {
    type: 'string',
    ...(pattern === undefined ? {} : { pattern }),
    example: form.format(EXAMPLE_ID),
    description: `A snowflake ID in its ${form.name} form.`,
  };
}

/**
 * The schema {@link snowflakeIdSchema} gives: plain JSON, usable in any OpenAPI document.
 *
 * @publicApi
 */
export interface SnowflakeIdSchema {
  type: 'string';
  format?: 'int64';
  pattern?: string;
  example: string;
  description: string;
}
