/**
 * Loads every entry of the package, as an app that uses all of them would. An entry named in MATRIX_SKIP_ENTRIES is
 * left out (the ioredis 6 variant has no TypeORM: TypeORM asks for ioredis ^5).
 */
const ENTRIES = [
  'nestjs-snowflake',
  'nestjs-snowflake/http',
  'nestjs-snowflake/health',
  'nestjs-snowflake/typeorm',
  'nestjs-snowflake/prisma',
  'nestjs-snowflake/drizzle',
  'nestjs-snowflake/mikro-orm',
  'nestjs-snowflake/sequelize',
  'nestjs-snowflake/testing',
  'nestjs-snowflake/graphql',
  'nestjs-snowflake/metrics',
  'nestjs-snowflake/swagger',
  'nestjs-snowflake/validation',
];

export async function loadEntries(): Promise<Record<string, number>> {
  const skip = new Set((process.env.MATRIX_SKIP_ENTRIES ?? '').split(',').filter(Boolean));
  const loaded: Record<string, number> = {};
  for (const entry of ENTRIES.filter((name) => !skip.has(name))) {
    const module = (await import(entry)) as Record<string, unknown>;
    loaded[entry] = Object.keys(module).length;
  }
  return loaded;
}
