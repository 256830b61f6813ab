import { Controller, Get, Param } from '@nestjs/common';
import { IdService, ParseSnowflakeIdPipe, type SnowflakeParts } from 'nestjs-snowflake';

/** Issues and decodes IDs. Bigints reach JSON as decimal strings (BigIntSerializerInterceptor, in app.module.ts). */
@Controller('ids')
export class IdsController {
  constructor(private readonly ids: IdService) {}

  /**
   * A fresh ID with its parts. While the lease is being re-claimed it waits instead of failing at once, each wait
   * for up to 3 × the lease TTL + maxFloorWaitMs (2 s by default); when a wait runs out, a 503 with the typed error.
   */
  @Get('next')
  async next(): Promise<SnowflakeParts> {
    return this.ids.decode(await this.ids.nextAsync());
  }

  /** The parts of any ID: when, which datacenter and worker, which sequence. 400 on malformed input. */
  @Get(':id')
  decode(@Param('id', ParseSnowflakeIdPipe) id: bigint): SnowflakeParts {
    return this.ids.decode(id);
  }
}
