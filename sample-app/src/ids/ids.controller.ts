import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
import { IdService, type SnowflakeParts } from 'nestjs-snowflake';
import { ParseSnowflakeIdPipe } from 'nestjs-snowflake/http';
import { ApiSnowflakeId } from 'nestjs-snowflake/swagger';
import { SnowflakePartsView } from './snowflake-parts.view.js';

/** Issues and decodes IDs. Bigints reach JSON as decimal strings (BigIntSerializerInterceptor, in app.module.ts). */
@Controller('ids')
export class IdsController {
  constructor(private readonly ids: IdService) {}

  /**
   * A fresh ID with its parts. While no ID can be issued (the lease is fenced or being re-claimed) it answers 503
   * with `Retry-After` at once (SnowflakeExceptionFilter) rather than hold the request: `nextAsync()` would wait up
   * to 3 × the lease TTL + maxFloorWaitMs, longer than most load balancers wait.
   */
  @Get('next')
  @ApiOkResponse({ type: SnowflakePartsView })
  next(): SnowflakeParts {
    return this.ids.decode(this.ids.next());
  }

  /** The parts of any ID: when, which datacenter and worker, which sequence. 400 on malformed input. */
  @Get(':id')
  @ApiOkResponse({ type: SnowflakePartsView })
  decode(@Param('id', ParseSnowflakeIdPipe) @ApiSnowflakeId() id: bigint): SnowflakeParts {
    return this.ids.decode(id);
  }
}
