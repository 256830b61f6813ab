import { Catch, HttpException, HttpStatus, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import {
  ClockMovedBackError,
  InvalidSnowflakeError,
  SequenceExhaustedError,
  SnowflakeError,
  WorkerUnavailableError,
} from '../core/errors.js';
import { LeaseExhaustedError, RedisUnavailableError } from '../lease/lease.errors.js';

/** Errors that pass: the lease is being re-claimed, Redis is away, the clock or the sequence catches up. */
const TEMPORARY = [
  WorkerUnavailableError,
  SequenceExhaustedError,
  ClockMovedBackError,
  RedisUnavailableError,
  LeaseExhaustedError,
];

/**
 * Answers the library's typed errors over HTTP with the status that tells clients what happened: a malformed ID is
 * the client's mistake (400); an ID that cannot be issued right now is a temporary outage (503 with `Retry-After`),
 * which load balancers and clients retry. Any other `SnowflakeError` (a misconfiguration, a driver that rounds IDs)
 * goes to Nest's own handling: 500 "Internal server error", logged, its details kept from the client.
 *
 * Register it app-wide with `{ provide: APP_FILTER, useClass: SnowflakeExceptionFilter }` or
 * `app.useGlobalFilters(new SnowflakeExceptionFilter(app.getHttpAdapter()))`. HTTP only.
 *
 * @publicApi
 */
@Catch(SnowflakeError)
export class SnowflakeExceptionFilter extends BaseExceptionFilter<SnowflakeError> {
  /** Seconds a client should wait before retrying after a 503. */
  static readonly retryAfterSeconds = 1;

  override catch(error: SnowflakeError, host: ArgumentsHost): void {
    const status = statusOf(error);
    if (status === undefined) return super.catch(error, host);
    if (status === HttpStatus.SERVICE_UNAVAILABLE) {
      const adapter = this.applicationRef ?? this.httpAdapterHost?.httpAdapter;
      adapter?.setHeader(host.getArgByIndex(1), 'Retry-After', String(SnowflakeExceptionFilter.retryAfterSeconds));
    }
    const body = { statusCode: status, error: error.name, message: error.message };
    super.catch(new HttpException(body, status, { cause: error }), host);
  }
}

function statusOf(error: SnowflakeError): HttpStatus | undefined {
  if (error instanceof InvalidSnowflakeError) return HttpStatus.BAD_REQUEST;
  if (TEMPORARY.some((type) => error instanceof type)) return HttpStatus.SERVICE_UNAVAILABLE;
  return undefined;
}
