import { Prisma } from '@prisma/client/extension';
import { SnowflakeConfigError } from '../../core/errors.js';
import { shardBitsOfSource, type SnowflakeIdSource } from '../id-issuer.js';
import { readClientSchemaInfo } from './prisma-datamodel.js';
import { PrismaIdFiller, type FilledOperation } from './prisma-id.filler.js';
import { buildIdPlan } from './prisma-id.plan.js';
import type { SnowflakePrismaOptions } from './snowflake-prisma.options.js';

interface QueryParams {
  model?: string;
  args: unknown;
  query: (args: never) => Promise<unknown>;
}

/**
 * A Prisma client extension that fills snowflake IDs into marked fields of every row a query creates: through
 * `create`, `createMany`, `createManyAndReturn`, `upsert` (create branch) and nested writes (`create`,
 * `createMany`, `connectOrCreate`, `upsert`, also inside nested or top-level `update`s).
 *
 * Mark a field with a `/// @GeneratedId` doc comment in schema.prisma or list it in `options.fields`. Its type
 * decides the value: `BigInt` gets a bigint, `String` and `Decimal` get the decimal string; `Int` and `Float`
 * are refused when the extension is applied. A value the caller gives, `null` included, is kept. Each row draws
 * its own ID when the query runs.
 *
 * The fields are resolved once per client, when `$extends` applies the extension; a missing field or an
 * unsuitable type throws then.
 *
 * With `shardFrom` (a layout with a shard field), a model's IDs carry the shard of another of its fields, such as
 * the user ID of an order; see {@link SnowflakePrismaOptions.shardFrom}.
 *
 * @param ids where IDs come from: `IdService`, or anything with `next(): bigint`
 * @param options extra fields, generators of their own for some models, the doc-comment tag, or the schema text to
 *   read tags from
 * @example
 * const prisma = new PrismaClient({ adapter }).$extends(snowflakeExtension(idService));
 * const user = await prisma.user.create({ data: { email, posts: { create: [{ title }] } } });
 * @publicApi
 */
export function snowflakeExtension(ids: SnowflakeIdSource, options: SnowflakePrismaOptions = {}) {
  if (typeof ids?.next !== 'function') {
    throw new SnowflakeConfigError(
      'ids',
      'pass an ID source with next(): bigint, such as the IdService injected from SnowflakeModule.',
    );
  }
  const sources = new Map(Object.entries(options.generators ?? {}));
  for (const [model, source] of sources) {
    if (typeof source?.next !== 'function') {
      throw new SnowflakeConfigError(
        `generators.${model}`,
        'pass an ID source with next(): bigint, such as the IdService of a named registration ' +
          "(@InjectIdService('orders')).",
      );
    }
  }
  // A shard key needs a layout with a shard field, in the source of the model: checked here, before any client is
  // extended.
  const shardBits = new Map(
    Object.keys(options.shardFrom ?? {}).map((model) => [
      model,
      shardBitsOfSource(sources.get(model) ?? ids, `shardFrom.${model}`),
    ]),
  );
  return Prisma.defineExtension((client) => {
    const plan = buildIdPlan(readClientSchemaInfo(client), options);
    for (const model of sources.keys()) {
      if ((plan.get(model)?.ids.length ?? 0) === 0) {
        throw new SnowflakeConfigError(
          `generators.${model}`,
          `the model ${JSON.stringify(model)} has no field to fill: mark its ID field with the doc comment or list ` +
            `it in \`fields\`, or check the model's name (as in schema.prisma).`,
        );
      }
    }
    const filler = new PrismaIdFiller(plan, ids, sources, shardBits);
    const handle =
      (operation: FilledOperation) =>
      async ({ model, args, query }: QueryParams): Promise<unknown> =>
        query((filler.concerns(model) ? await filler.fill(model, operation, args) : args) as never);
    return client.$extends({
      name: 'nestjs-snowflake',
      query: {
        $allModels: {
          create: handle('create'),
          createMany: handle('createMany'),
          createManyAndReturn: handle('createManyAndReturn'),
          upsert: handle('upsert'),
          update: handle('update'),
        },
      },
    });
  });
}
