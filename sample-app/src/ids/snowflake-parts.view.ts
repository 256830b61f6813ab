import { ApiProperty } from '@nestjs/swagger';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';

/** The parts of an ID, as GET /ids/next and GET /ids/:id answer them (IdService.decode()). */
export class SnowflakePartsView {
  @ApiSnowflakeId()
  id!: bigint;

  @ApiProperty({ description: 'When the ID was issued, as Unix milliseconds (the start of its time unit).' })
  timestamp!: number;

  @ApiProperty({ type: String, format: 'date-time' })
  date!: Date;

  @ApiProperty()
  datacenterId!: number;

  @ApiProperty()
  workerId!: number;

  @ApiProperty()
  sequence!: number;
}
