import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { IsSnowflakeId } from 'nestjs-snowflake/validation';

/** Applies the swagger and validation decorators at class definition, against this app's versions of both. */
export class PostQueryDto {
  @ApiSnowflakeId()
  @IsSnowflakeId()
  id!: string;
}
