/**
 * `nestjs-snowflake/http`: IDs in requests and responses. The parameter pipe and decorators that read an ID from a
 * route, the exception filter that answers the library's errors with 400 or 503 (and `Retry-After`), and the JSON
 * helpers that write 64-bit IDs as strings. Only `@nestjs/common` and `@nestjs/core` are needed, as for the main entry.
 */
export { ParseSnowflakeIdPipe, type ParseSnowflakeIdPipeOptions } from './http/parse-snowflake-id.pipe.js';
export { SnowflakeIdBody, SnowflakeIdParam, SnowflakeIdQuery } from './http/snowflake-id.decorators.js';
export { SnowflakeExceptionFilter } from './http/snowflake-exception.filter.js';
export { bigintsToStrings, snowflakeJsonReplacer } from './json/bigint-json.js';
export { BigIntSerializerInterceptor } from './json/bigint-serializer.interceptor.js';
