import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ApiProperty, DECORATORS, type ApiPropertyOptions } from '@nestjs/swagger';
import { SnowflakeConfigError } from '../core/errors.js';
import { describeInput } from '../core/describe-input.js';
import { checkIdForm } from '../core/id-form.check.js';
import { booleanOption, rejectUnknownKeys } from '../core/option-checks.js';
import { SNOWFLAKE_ID_ARGS, type SnowflakeIdArg } from '../http/snowflake-id.decorators.js';
import { snowflakeIdSchema, type DocumentedIdForm, type SnowflakeIdSchema } from './snowflake-id.schema.js';
import { ApiSnowflakeIdPlacementError } from './swagger.errors.js';

/** Where a parameter travels. */
type ParameterLocation = 'path' | 'query' | 'header';

/**
 * Options of {@link ApiSnowflakeId}.
 *
 * @publicApi
 */
export interface ApiSnowflakeIdOptions {
  /** What the ID identifies. @default a sentence saying it is a snowflake ID as a decimal string */
  description?: string;
  /**
   * @default true; on a DTO property, what the `@nestjs/swagger` CLI plugin reads from `?`, if it runs. A path
   * parameter is always required.
   */
  required?: boolean;
  /** A DTO property that may be `null`. @default false */
  nullable?: boolean;
  deprecated?: boolean;
  /** A list of IDs. @default true for a DTO property declared as an array, else false */
  isArray?: boolean;
  /** The text form the app uses for IDs, when not the decimal string: the schema takes its pattern and example. */
  form?: DocumentedIdForm;
  /** An example ID, in the form's text. @default an ID written by the form */
  example?: string;
  /**
   * The parameter's name. On a handler parameter it is read from `@Param('name')`, `@Query('name')`,
   * `@Headers('name')`, `@SnowflakeIdParam('name')` or `@SnowflakeIdQuery('name')`; on a method, give it (with `in`).
   */
  name?: string;
  /** Where the parameter travels, for the decorator on a method. @default read from the parameter's decorator */
  in?: ParameterLocation;
}

const KNOWN_KEYS = ['description', 'required', 'nullable', 'deprecated', 'isArray', 'form', 'example', 'name', 'in'];
const LOCATIONS: Partial<Record<RouteParamtypes, ParameterLocation>> = {
  [RouteParamtypes.PARAM]: 'path',
  [RouteParamtypes.QUERY]: 'query',
  [RouteParamtypes.HEADERS]: 'header',
};

/**
 * Documents an ID as the app sends and reads it: a decimal string (`type: string`, a digits pattern, the `int64`
 * format hint, an example), not the `integer/int64` that `@nestjs/swagger` writes for a `bigint`, so that generated
 * clients type it as `string` and never round it. Goes on:
 * - a DTO property (`@ApiSnowflakeId() userId!: bigint`; an array property documents a list of IDs);
 * - a handler parameter (`@Param('id', ParseSnowflakeIdPipe) @ApiSnowflakeId() id: bigint`), whose name and place
 *   (path, query, header) are read from its Nest decorator (or `@SnowflakeIdParam()`, `@SnowflakeIdQuery()`) when
 *   the document is built;
 * - a handler, with `name` and `in`, for a parameter the handler does not declare.
 *
 * @example
 * ```ts
 * class CreateOrder {
 *   @ApiSnowflakeId({ description: 'The buyer' }) userId!: bigint;
 * }
 * ```
 *
 * @publicApi
 */
export function ApiSnowflakeId(
  options: ApiSnowflakeIdOptions = {},
): PropertyDecorator & ParameterDecorator & MethodDecorator {
  rejectUnknownKeys('', options, KNOWN_KEYS, '@ApiSnowflakeId()');
  if (options.in !== undefined && !['path', 'query', 'header'].includes(options.in)) {
    throw new SnowflakeConfigError('in', `@ApiSnowflakeId() documents 'path', 'query' or 'header' parameters.`);
  }
  checkDocumentOptions(options);
  const schema = schemaOf(options);
  return (target: object, key?: string | symbol, third?: number | PropertyDescriptor): void => {
    if (typeof third === 'number') return documentParameter(target, key, third, options, schema);
    if (third !== undefined) return documentMethodParameter(third, options, schema);
    documentProperty(target, key!, options, schema);
  };
}

/**
 * The options that go into the document as given are checked where the decorator is applied: a `required: 'false'`
 * would be written as it is, an `isArray: 'yes'` document a list, and a form without `format` fail as a TypeError.
 */
function checkDocumentOptions(options: ApiSnowflakeIdOptions): void {
  for (const key of ['required', 'nullable', 'deprecated', 'isArray'] as const) {
    booleanOption(key, options[key], false);
  }
  for (const key of ['description', 'example', 'name'] as const) {
    const value = options[key];
    if (value !== undefined && typeof value !== 'string') {
      throw new SnowflakeConfigError(key, `@ApiSnowflakeId() expected a string, got ${describeInput(value)}.`);
    }
  }
  checkIdForm(options.form, '@ApiSnowflakeId()');
}

function schemaOf(options: ApiSnowflakeIdOptions): SnowflakeIdSchema {
  const schema = snowflakeIdSchema(options.form);
  if (options.example !== undefined) schema.example = options.example;
  if (options.description !== undefined) schema.description = options.description;
  return schema;
}

function documentProperty(
  target: object,
  key: string | symbol,
  options: ApiSnowflakeIdOptions,
  schema: SnowflakeIdSchema,
): void {
  const isArray = options.isArray ?? Reflect.getMetadata('design:type', target, key) === Array;
  const { description, ...item } = schema;
  const property: ApiPropertyOptions = isArray ? { type: 'array', items: item, description } : { ...item, description };
  ApiProperty({
    ...property,
    // Left out unless given, so that the CLI plugin's reading of `?` still decides (required by default).
    ...(options.required === undefined ? {} : { required: options.required }),
    ...(options.nullable === undefined ? {} : { nullable: options.nullable }),
    ...(options.deprecated === undefined ? {} : { deprecated: options.deprecated }),
  })(target, key);
}

/** An OpenAPI parameter object, in the shape `@nestjs/swagger` keeps its explicit parameters. */
interface ParameterEntry {
  name: string;
  in: ParameterLocation;
  required: boolean;
  description: string;
  deprecated?: boolean;
  type: 'string' | 'array';
  schema: object;
}

function entryOf(
  name: string,
  location: ParameterLocation,
  options: ApiSnowflakeIdOptions,
  schema: SnowflakeIdSchema,
): ParameterEntry {
  const { description, ...item } = schema;
  const isArray = options.isArray === true;
  return {
    name,
    in: location,
    // A path parameter is always required (OpenAPI); a query value or header as the options say.
    required: location === 'path' ? true : (options.required ?? true),
    description,
    ...(options.deprecated === undefined ? {} : { deprecated: options.deprecated }),
    // `type` overrides the `integer` that @nestjs/swagger would infer from a parameter typed `bigint`.
    type: isArray ? 'array' : 'string',
    schema: isArray ? { type: 'array', items: item } : item,
  };
}

function addEntry(method: object, entry: ParameterEntry): void {
  const entries = (Reflect.getMetadata(DECORATORS.API_PARAMETERS, method) as object[] | undefined) ?? [];
  Reflect.defineMetadata(DECORATORS.API_PARAMETERS, [...entries, entry], method);
}

function documentMethodParameter(
  descriptor: PropertyDescriptor,
  options: ApiSnowflakeIdOptions,
  schema: SnowflakeIdSchema,
): void {
  if (options.name === undefined || options.in === undefined) {
    throw new SnowflakeConfigError(
      'name',
      "@ApiSnowflakeId() on a handler needs `name` and `in` ('path', 'query' or 'header'); on a parameter it reads them.",
    );
  }
  addEntry(descriptor.value as object, entryOf(options.name, options.in, options, schema));
}

function documentParameter(
  target: object,
  key: string | symbol | undefined,
  index: number,
  options: ApiSnowflakeIdOptions,
  schema: SnowflakeIdSchema,
): void {
  const method = key === undefined ? undefined : (Object.getOwnPropertyDescriptor(target, key)?.value as unknown);
  if (typeof method !== 'function') {
    throw new SnowflakeConfigError('ApiSnowflakeId', 'goes on a handler parameter, not on a constructor parameter.');
  }
  const where = `${target.constructor.name}.${String(key)} (parameter ${index})`;
  // Nest's @Param/@Query may run before or after this decorator (decorators of one parameter apply right to left),
  // so the name and place are read when @nestjs/swagger builds the document, once every decorator has run.
  let resolved: { name: string; in: ParameterLocation } | undefined;
  const resolve = () => (resolved ??= identify(target, key!, index, options, where));
  const entry = entryOf('', 'path', options, schema);
  const computed = {
    name: () => resolve().name,
    in: () => resolve().in,
    required: () => resolve().in === 'path' || (options.required ?? true),
  };
  for (const [property, compute] of Object.entries(computed)) {
    let written: { value: unknown } | undefined;
    // Computed on reading; a value @nestjs/swagger writes back is kept, as on a plain object.
    Object.defineProperty(entry, property, {
      enumerable: true,
      get: () => (written === undefined ? compute() : written.value),
      set: (value: unknown) => (written = { value }),
    });
  }
  addEntry(method, entry);
}

function identify(
  target: object,
  key: string | symbol,
  index: number,
  options: ApiSnowflakeIdOptions,
  where: string,
): { name: string; in: ParameterLocation } {
  if (options.name !== undefined && options.in !== undefined) return { name: options.name, in: options.in };
  // @SnowflakeIdParam() and @SnowflakeIdQuery() are custom decorators to Nest: they say themselves what they read.
  const own = (
    Reflect.getMetadata(SNOWFLAKE_ID_ARGS, target.constructor, key) as Record<number, SnowflakeIdArg> | undefined
  )?.[index];
  if (own !== undefined) return { name: options.name ?? own.name, in: options.in ?? own.in };
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, key) ?? {}) as Record<
    string,
    { index: number; data?: unknown }
  >;
  const found = Object.entries(args).find(([, arg]) => arg.index === index);
  if (found === undefined) throw new ApiSnowflakeIdPlacementError(where, 'the parameter has no Nest decorator.');
  const location = LOCATIONS[Number(found[0].split(':')[0]) as RouteParamtypes];
  if (location === undefined) {
    throw new ApiSnowflakeIdPlacementError(where, 'the parameter is not a route parameter, query value or header.');
  }
  const name = options.name ?? found[1].data;
  if (typeof name !== 'string' || name === '') {
    throw new ApiSnowflakeIdPlacementError(where, `the parameter reads the whole ${location} object, not one value.`);
  }
  return { name, in: options.in ?? location };
}
