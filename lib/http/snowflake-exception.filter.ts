import { Catch, HttpException, HttpStatus, Logger, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { OutageLog } from './outage-log.js';
import { InvalidSnowflakeError, SnowflakeError, TransientSnowflakeError } from '../core/errors.js';

/**
 * Answers the library's typed errors over HTTP with the status that tells clients what happened:
 * - `InvalidSnowflakeError` (a malformed ID) is the client's mistake: 400 with the reason.
 * - An ID that cannot be issued right now (a `TransientSnowflakeError`) is a temporary outage: 503 with `Retry-After`,
 *   which load balancers and clients retry: the seconds left of a settling namespace when the error knows them
 *   (`retryAfterMs`), otherwise {@link SnowflakeExceptionFilter.retryAfterSeconds}. The body (Nest's shape, the error
 *   class in `type`) names the class but not its message, which speaks of the deployment (Redis addresses, options);
 *   the message goes to the log as a warning, once per kind of outage, then as counts every 10 s while it lasts.
 *   Without this filter the same errors answer 503 too (they carry `status` 503 for Nest's default handler), without
 *   `Retry-After` and with an error logged per request.
 * - Any other `SnowflakeError` (a misconfiguration, a driver that rounds IDs) goes to Nest's own handling: 500
 *   "Internal server error", logged.
 *
 * Register it app-wide with `{ provide: APP_FILTER, useClass: SnowflakeExceptionFilter }` or
 * `app.useGlobalFilters(new SnowflakeExceptionFilter(app.getHttpAdapter()))`. HTTP only, like Nest's
 * `BaseExceptionFilter` it extends.
 *
 * @publicApi
 */
@Catch(SnowflakeError)
export class SnowflakeExceptionFilter extends BaseExceptionFilter<SnowflakeError> {
  /** Seconds a client should wait before retrying after a 503, when the error does not know better. */
  static readonly retryAfterSeconds = 1;

  /** The `Retry-After` of `error`, in whole seconds: what is left of its wait when known, at least 1. */
  static retryAfterOf(error: TransientSnowflakeError): number {
    const ms = error.retryAfterMs;
    return ms === undefined ? SnowflakeExceptionFilter.retryAfterSeconds : Math.max(1, Math.ceil(ms / 1000));
  }

  private readonly outages = new OutageLog(new Logger('Snowflake'));

  override catch(error: SnowflakeError, host: ArgumentsHost): void {
    if (error instanceof InvalidSnowflakeError) {
      const body = {
        statusCode: HttpStatus.BAD_REQUEST,
        error: 'Bad Request',
        message: error.message,
        type: error.name,
      };
      return super.catch(new HttpException(body, HttpStatus.BAD_REQUEST, { cause: error }), host);
    }
    if (!(error instanceof TransientSnowflakeError)) return super.catch(error, host);

    this.outages.record(error);
    const adapter = this.applicationRef ?? this.httpAdapterHost?.httpAdapter;
    const response: unknown = host.getArgByIndex(1);
    // Once a handler has started the response, headers can no longer be set; super.catch() then ends it.
    const retryAfter = SnowflakeExceptionFilter.retryAfterOf(error);
    if (adapter && !adapter.isHeadersSent(response)) {
      adapter.setHeader(response, 'Retry-After', String(retryAfter));
    }
    const status = HttpStatus.SERVICE_UNAVAILABLE;
    const message = `No ID can be issued right now; retry in ${retryAfter} s.`;
    const body = { statusCode: status, error: 'Service Unavailable', message, type: error.name };
    super.catch(new HttpException(body, status, { cause: error }), host);
  }
}
