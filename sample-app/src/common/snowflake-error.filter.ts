import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  InvalidSnowflakeError,
  SequenceExhaustedError,
  SnowflakeError,
  WorkerUnavailableError,
} from 'nestjs-snowflake';

/**
 * Answers the library's typed errors with the right status: a malformed ID is the client's mistake (400); an ID that
 * cannot be issued right now (lease being re-claimed, Redis away) is a temporary outage (503).
 */
@Catch(SnowflakeError)
export class SnowflakeErrorFilter implements ExceptionFilter<SnowflakeError> {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: SnowflakeError, host: ArgumentsHost): void {
    const status =
      error instanceof InvalidSnowflakeError
        ? HttpStatus.BAD_REQUEST
        : error instanceof WorkerUnavailableError || error instanceof SequenceExhaustedError
          ? HttpStatus.SERVICE_UNAVAILABLE
          : HttpStatus.INTERNAL_SERVER_ERROR;
    const body = { statusCode: status, error: error.name, message: error.message };
    this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), body, status);
  }
}
