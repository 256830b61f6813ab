// Every entry of the package, imported statically as a CommonJS app does (compiled to require(): Node >= 20.19
// loads the ESM package).
import * as root from 'nestjs-snowflake';
import * as drizzle from 'nestjs-snowflake/drizzle';
import * as graphql from 'nestjs-snowflake/graphql';
import * as health from 'nestjs-snowflake/health';
import * as http from 'nestjs-snowflake/http';
import * as mikroOrm from 'nestjs-snowflake/mikro-orm';
import * as metrics from 'nestjs-snowflake/metrics';
import * as prisma from 'nestjs-snowflake/prisma';
import * as sequelize from 'nestjs-snowflake/sequelize';
import * as swagger from 'nestjs-snowflake/swagger';
import * as testing from 'nestjs-snowflake/testing';
import * as typeorm from 'nestjs-snowflake/typeorm';
import * as validation from 'nestjs-snowflake/validation';

export function loadEntries(): Record<string, number> {
  const modules: Record<string, object> = {
    'nestjs-snowflake': root,
    'nestjs-snowflake/http': http,
    'nestjs-snowflake/health': health,
    'nestjs-snowflake/typeorm': typeorm,
    'nestjs-snowflake/prisma': prisma,
    'nestjs-snowflake/drizzle': drizzle,
    'nestjs-snowflake/mikro-orm': mikroOrm,
    'nestjs-snowflake/sequelize': sequelize,
    'nestjs-snowflake/testing': testing,
    'nestjs-snowflake/graphql': graphql,
    'nestjs-snowflake/metrics': metrics,
    'nestjs-snowflake/swagger': swagger,
    'nestjs-snowflake/validation': validation,
  };
  return Object.fromEntries(Object.entries(modules).map(([name, module]) => [name, Object.keys(module).length]));
}
