import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator, type HealthCheckResult } from '@nestjs/terminus';
import { SnowflakeHealthIndicator } from 'nestjs-snowflake/health';

@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly snowflake: SnowflakeHealthIndicator,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  /** 200 while IDs can be issued and the database answers; 503 with the reason otherwise. */
  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([() => this.snowflake.isHealthy('snowflake'), () => this.database.pingCheck('database')]);
  }
}
