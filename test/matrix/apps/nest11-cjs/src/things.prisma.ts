import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '@prisma/client';
import type { IdService } from 'nestjs-snowflake';
import { snowflakeExtension } from 'nestjs-snowflake/prisma';

/**
 * Creates a thing with two nested parts through the extension on Prisma 6, and reads them back: the BigInt and the
 * String IDs the extension filled.
 */
export async function createAndReadThing(ids: IdService) {
  const schema = process.env.DATABASE_SCHEMA!;
  const base = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.env.DATABASE_URL }, { schema }) });
  await base.$executeRawUnsafe(`CREATE TABLE "${schema}"."Thing" (id BIGINT PRIMARY KEY, label TEXT NOT NULL)`);
  await base.$executeRawUnsafe(
    `CREATE TABLE "${schema}"."Part" (id TEXT PRIMARY KEY, "thingId" BIGINT NOT NULL REFERENCES "${schema}"."Thing" (id))`,
  );
  const prisma = base.$extends(snowflakeExtension(ids));
  try {
    const created = await prisma.thing.create({
      data: { label: 'prisma 6', parts: { create: [{}, {}] } },
      include: { parts: true },
    });
    const readBack = await prisma.thing.findUniqueOrThrow({ where: { id: created.id }, include: { parts: true } });
    return {
      saved: [created.id.toString(), ...created.parts.map((part) => part.id)],
      readBack: [readBack.id.toString(), ...readBack.parts.map((part) => part.id)],
    };
  } finally {
    await prisma.$disconnect();
  }
}
