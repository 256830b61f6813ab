import { Injectable, type PipeTransform } from '@nestjs/common';
import { IdService } from 'nestjs-snowflake';

/**
 * Parses a route parameter into an ID (bigint). Malformed input throws the library's InvalidSnowflakeError, which
 * {@link SnowflakeErrorFilter} answers with 400.
 */
@Injectable()
export class ParseSnowflakeIdPipe implements PipeTransform<string, bigint> {
  constructor(private readonly ids: IdService) {}

  transform(value: string): bigint {
    return this.ids.decode(value).id;
  }
}
