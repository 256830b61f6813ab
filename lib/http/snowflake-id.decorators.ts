import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ParseSnowflakeIdPipe, type ParseSnowflakeIdPipeOptions } from './parse-snowflake-id.pipe.js';

/** Where in the HTTP request a value is read from; Express and Fastify both parse into these. */
type RequestPart = 'params' | 'query' | 'body';

/**
 * A parameter decorator that reads one named value of the request itself. Nest passes it to global pipes as a
 * `custom` argument, which a global `ValidationPipe` leaves alone (unless `validateCustomDecorators` is set), so
 * the ID pipe sees the raw text.
 */
const requestValue = (part: RequestPart) =>
  createParamDecorator((name: string, context: ExecutionContext): unknown => {
    const request = context.switchToHttp().getRequest<Record<RequestPart, unknown>>();
    const values = request[part];
    // Own values only: `toString` or `constructor` is no query value a client sent.
    if (values === null || typeof values !== 'object' || !Object.hasOwn(values, name)) return undefined;
    return (values as Record<string, unknown>)[name];
  });

/**
 * Metadata on a controller class, per handler: parameter index → the name and place of an ID read by
 * {@link SnowflakeIdParam} or {@link SnowflakeIdQuery}. Nest records custom decorators under keys that do not say
 * where the value comes from, so `@ApiSnowflakeId()` reads the name and place of the parameter here.
 *
 * @internal
 */
export const SNOWFLAKE_ID_ARGS = 'nestjs-snowflake:id-args';

/** Where a parameter read by one of these decorators travels, as OpenAPI names it. @internal */
export interface SnowflakeIdArg {
  name: string;
  in: 'path' | 'query';
}

function recordArg(target: object, key: string | symbol | undefined, index: number, arg: SnowflakeIdArg): void {
  if (key === undefined) return;
  const args = (Reflect.getMetadata(SNOWFLAKE_ID_ARGS, target.constructor, key) ?? {}) as Record<
    number,
    SnowflakeIdArg
  >;
  Reflect.defineMetadata(SNOWFLAKE_ID_ARGS, { ...args, [index]: arg }, target.constructor, key);
}

const paramValue = requestValue('params');
const queryValue = requestValue('query');
const bodyValue = requestValue('body');

/**
 * A route parameter as an ID of the app's layout: `@SnowflakeIdParam('id') id: bigint`. The same as
 * `@Param('id', ParseSnowflakeIdPipe)`, but safe beside a global `ValidationPipe({ transform: true })`, which
 * otherwise hands a `bigint` parameter to class-transformer before any parameter pipe runs: `new BigInt()` fails
 * for an absent value ("BigInt is not a constructor") and `BigInt('12ab')` for a malformed one, both as a 500.
 *
 * @example
 * ```ts
 * @Get(':id') find(@SnowflakeIdParam('id') id: bigint) {}
 * ```
 * @publicApi
 */
export function SnowflakeIdParam(name: string, options?: ParseSnowflakeIdPipeOptions): ParameterDecorator {
  return leftToTheIdPipe(paramValue(name, new ParseSnowflakeIdPipe(options)), { name, in: 'path' });
}

/**
 * A query value as an ID of the app's layout: `@SnowflakeIdQuery('after', { optional: true }) after?: bigint`. Safe
 * beside a global `ValidationPipe({ transform: true })` (see {@link SnowflakeIdParam}); `optional` lets an absent
 * value through as `undefined`.
 *
 * @publicApi
 */
export function SnowflakeIdQuery(name: string, options?: ParseSnowflakeIdPipeOptions): ParameterDecorator {
  return leftToTheIdPipe(queryValue(name, new ParseSnowflakeIdPipe(options)), { name, in: 'query' });
}

/**
 * A field of the JSON (or form) body as an ID of the app's layout: `@SnowflakeIdBody('userId') userId: bigint`. Safe
 * beside a global `ValidationPipe({ transform: true })` (see {@link SnowflakeIdParam}), where
 * `@Body('userId', ParseSnowflakeIdPipe)` answers 500 for an absent value or an object; `optional` lets an absent
 * value through as `undefined`. A JSON number is read only while it is exact (a safe integer): send IDs as strings.
 * For a body of several fields, a DTO with `@IsSnowflakeId()` and `@ToSnowflakeId()` checks them all.
 *
 * @publicApi
 */
export function SnowflakeIdBody(name: string, options?: ParseSnowflakeIdPipeOptions): ParameterDecorator {
  return leftToTheIdPipe(bodyValue(name, new ParseSnowflakeIdPipe(options)));
}

/**
 * With `validateCustomDecorators: true` a global `ValidationPipe` reaches custom arguments too, and builds a `bigint`
 * parameter itself from `design:paramtypes` (`new BigInt()` on an absent value). The handler's recorded type of
 * this one parameter is therefore set to `Object` ("any value"), which ValidationPipe passes through untouched: the
 * ID pipe is what checks it. TypeScript records the types before it applies parameter decorators, so they are
 * there to change.
 */
function leftToTheIdPipe(decorator: ParameterDecorator, arg?: SnowflakeIdArg): ParameterDecorator {
  return (target, key, index) => {
    decorator(target, key, index);
    // A body field is no OpenAPI parameter: the body's schema (`@ApiBody()`) describes it.
    if (arg !== undefined) recordArg(target, key, index, arg);
    if (key === undefined) return;
    const types: unknown = Reflect.getMetadata('design:paramtypes', target, key);
    if (Array.isArray(types) && types[index] === BigInt) {
      const recorded: unknown[] = types.slice();
      recorded[index] = Object;
      Reflect.defineMetadata('design:paramtypes', recorded, target, key);
    }
  };
}
