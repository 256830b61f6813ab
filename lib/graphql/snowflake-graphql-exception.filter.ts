import { Catch, Logger, type ArgumentsHost } from '@nestjs/common';
import type { GqlExceptionFilter } from '@nestjs/graphql';
import type { GraphQLError } from 'graphql';
import { InvalidSnowflakeError, SnowflakeError, TransientSnowflakeError } from '../core/errors.js';
import { OutageLog } from '../http/outage-log.js';
import { SnowflakeExceptionFilter } from '../http/snowflake-exception.filter.js';
import { snowflakeGraphQLError } from './snowflake-graphql.errors.js';

/**
 * Maps the library's errors thrown in resolvers (root, mutation and `@ResolveField` resolvers alike) to GraphQL errors
 * with a code, as {@link snowflakeGraphQLError} describes: `BAD_USER_INPUT` with the reason, `SERVICE_UNAVAILABLE`
 * with `retryAfterSeconds` and a generic message, or `INTERNAL_SERVER_ERROR`. It logs as the HTTP filter does: each
 * kind of outage once when it starts, then counts every 10 s; other errors as errors; invalid IDs not at all.
 *
 * Outside GraphQL it answers HTTP requests exactly as `SnowflakeExceptionFilter`, which it extends, so one app-wide
 * registration serves an app with both controllers and resolvers:
 * `providers: [{ provide: APP_FILTER, useClass: SnowflakeGraphQLExceptionFilter }]`. Microservice and WebSocket
 * handlers need filters of their own.
 *
 * @publicApi
 */
@Catch(SnowflakeError)
export class SnowflakeGraphQLExceptionFilter
  extends SnowflakeExceptionFilter
  implements GqlExceptionFilter<SnowflakeError, GraphQLError | void>
{
  private readonly logger = new Logger('Snowflake');
  private readonly graphqlOutages = new OutageLog(this.logger, 10_000, 'SERVICE_UNAVAILABLE');

  override catch(error: SnowflakeError, host: ArgumentsHost): GraphQLError | void {
    if (host.getType<string>() !== 'graphql') return super.catch(error, host);
    if (error instanceof TransientSnowflakeError) {
      this.graphqlOutages.record(error);
    } else if (!(error instanceof InvalidSnowflakeError)) {
      this.logger.error(error);
    }
    // Returned, not thrown: Nest hands a GraphQL filter's result to the executor, which reports an Error as the
    // field's error.
    return snowflakeGraphQLError(error);
  }
}
