/**
 * Names the main entry kept from 0.x so that apps upgrade without a broken build. Each alias is the same value as its
 * new home (the same class, so the same DI token); editors strike it through, and the next major release drops it.
 */
import { checkNodeFitsLayout } from './core/layout.js';
import { formatId, parseIdText } from './forms/format.js';
import { ParseSnowflakeIdPipe as HttpParseSnowflakeIdPipe } from './http/parse-snowflake-id.pipe.js';
import type { ParseSnowflakeIdPipeOptions as HttpParseSnowflakeIdPipeOptions } from './http/parse-snowflake-id.pipe.js';
import {
  SnowflakeIdParam as HttpSnowflakeIdParam,
  SnowflakeIdQuery as HttpSnowflakeIdQuery,
} from './http/snowflake-id.decorators.js';
import { SnowflakeExceptionFilter as HttpSnowflakeExceptionFilter } from './http/snowflake-exception.filter.js';
import {
  bigintsToStrings as httpBigintsToStrings,
  snowflakeJsonReplacer as httpSnowflakeJsonReplacer,
} from './json/bigint-json.js';
import { BigIntSerializerInterceptor as HttpBigIntSerializerInterceptor } from './json/bigint-serializer.interceptor.js';
import { SNOWFLAKE_GENERATOR as GENERATOR_TOKEN } from './module/snowflake.tokens.js';

/** @deprecated Renamed {@link formatId}. */
export const format = formatId;
/** @deprecated Renamed {@link parseIdText}. */
export const parse = parseIdText;
/** @deprecated Renamed {@link checkNodeFitsLayout}. */
export const assertNodeFits = checkNodeFitsLayout;

/** @deprecated Import it from `nestjs-snowflake/http`. */
export const ParseSnowflakeIdPipe = HttpParseSnowflakeIdPipe;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export type ParseSnowflakeIdPipe = HttpParseSnowflakeIdPipe;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export type ParseSnowflakeIdPipeOptions = HttpParseSnowflakeIdPipeOptions;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export const SnowflakeIdParam = HttpSnowflakeIdParam;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export const SnowflakeIdQuery = HttpSnowflakeIdQuery;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export const SnowflakeExceptionFilter = HttpSnowflakeExceptionFilter;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export type SnowflakeExceptionFilter = HttpSnowflakeExceptionFilter;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export const bigintsToStrings = httpBigintsToStrings;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export const snowflakeJsonReplacer = httpSnowflakeJsonReplacer;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export const BigIntSerializerInterceptor = HttpBigIntSerializerInterceptor;
/** @deprecated Import it from `nestjs-snowflake/http`. */
export type BigIntSerializerInterceptor = HttpBigIntSerializerInterceptor;

/**
 * @deprecated Inject `IdService` (or `@InjectIdService(name)`). The raw generator skips the lease's checks: a holder
 * that lost its worker ID or whose clock went back would still issue. It stays internal from the next major release.
 */
export const SNOWFLAKE_GENERATOR = GENERATOR_TOKEN;
