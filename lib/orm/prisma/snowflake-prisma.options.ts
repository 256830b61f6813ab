import type { SnowflakeIdSource } from '../id-issuer.js';
import type { PrismaDatamodelLike } from './prisma-datamodel.js';

/**
 * Options of {@link snowflakeExtension}.
 *
 * @publicApi
 */
export interface SnowflakePrismaOptions {
  /**
   * Fields to fill, by model name as in schema.prisma, besides those marked with the doc comment.
   *
   * @example { User: 'id', Order: ['id', 'publicId'] }
   */
  fields?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Generators of their own for some models, by model name as in schema.prisma: the `IdService` of a named
   * `SnowflakeModule` registration (`@InjectIdService('orders')`), for example. Other models take IDs from the
   * extension's first argument. A model here that has no field to fill fails when the extension is applied.
   *
   * @example { Order: orderIds, OrderLine: orderIds }
   */
  generators?: Readonly<Record<string, SnowflakeIdSource>>;
  /**
   * The tag in a field's `///` doc comment that marks it; `false` reads no doc comments, so only `fields` count.
   *
   * @default '@GeneratedId'
   */
  marker?: string | false;
  /**
   * The schema text (a string per file of a multi-file schema), read for the doc comments. By default the
   * extension reads the copy of the schema the generated client carries; pass this if that ever fails.
   *
   * @example { schema: readFileSync('prisma/schema.prisma', 'utf8') }
   */
  schema?: string | readonly string[];
  /**
   * A DMMF datamodel with documentation, for example `(await getDMMF({ datamodel: text })).datamodel` from
   * `@prisma/internals` at build time. Taken instead of `schema` and the client's copy of the schema.
   */
  datamodel?: PrismaDatamodelLike;
  /**
   * The field whose value is the shard key of a model's generated IDs, by model name (a layout with a shard field,
   * such as `'sharded'`): `{ Order: 'userId' }` puts every order of a user in the user's shard. In a nested create
   * under the related row (`user.create({ data: { orders: { create: [...] } } })`) the key is taken from that row,
   * and from `connect` on the relation; a row without it fails with `ShardKeyMissingError` rather than land in
   * shard 0.
   *
   * @example { Order: 'userId', Payment: 'accountId' }
   */
  shardFrom?: Readonly<Record<string, string>>;
}
