import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SnowflakeHealthModule } from 'nestjs-snowflake/health';
import { HealthController } from './health.controller.js';

/** GET /health for load balancers and orchestrators: the worker-ID lease and the database. */
@Module({
  imports: [TerminusModule, SnowflakeHealthModule],
  controllers: [HealthController],
})
export class HealthModule {}
