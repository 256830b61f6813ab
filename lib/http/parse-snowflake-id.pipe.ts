import { BadRequestException, Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { InvalidSnowflakeError } from '../core/errors.js';
import { IdService } from '../module/id.service.js';

/**
 * Parses a route parameter, query value or body field into an ID (a bigint) of the app's layout:
 * `@Param('id', ParseSnowflakeIdPipe) id: bigint`. Malformed input (not digits, negative, wider than the layout)
 * answers 400 with the reason, like Nest's `ParseIntPipe`, instead of reaching the handler or failing with a 500.
 *
 * @publicApi
 */
@Injectable()
export class ParseSnowflakeIdPipe implements PipeTransform<unknown, bigint> {
  constructor(private readonly ids: IdService) {}

  transform(value: unknown, metadata: ArgumentMetadata): bigint {
    try {
      return this.ids.decode(value as bigint | string | number).id;
    } catch (error) {
      if (!(error instanceof InvalidSnowflakeError)) throw error;
      const message = metadata.data ? `${metadata.data}: ${error.message}` : error.message;
      throw new BadRequestException(
        { statusCode: 400, error: 'Bad Request', message, type: error.name },
        { cause: error },
      );
    }
  }
}
