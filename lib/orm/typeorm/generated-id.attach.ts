import { checkColumnHolds } from './generated-id.column-type.js';
import type { IdIssuer } from '../id-issuer.js';
import { DataSourceNotInitializedError } from './generated-id.errors.js';
import { issuersOf, type IdIssuers } from './generated-id.issuers.js';
import { GeneratedIdSubscriber } from './generated-id.subscriber.js';
import { probePrecision } from './precision.probe.js';
import type { DataSourceLike } from './typeorm.structural.js';

/** Options of {@link attachGeneratedIds}. @publicApi */
export interface AttachGeneratedIdsOptions {
  /** The DataSource's name in messages. @default 'default' */
  name?: string;
  /** Where warnings go. @default console */
  logger?: { warn(message: string): void };
  /**
   * Issuers of named generators, for `@GeneratedId({ generator })` properties: the `IdService`s of named
   * `SnowflakeModule` registrations, by name. `ids` serves properties without `generator`.
   *
   * @example { generators: { orders: orderIds } }
   */
  generators?: Readonly<Record<string, IdIssuer>>;
}

/**
 * Makes a TypeORM DataSource fill `@GeneratedId()` properties from `ids` on insert, and returns a function that
 * undoes it. `SnowflakeTypeOrmModule` does this for every DataSource of the app; call it yourself for a DataSource
 * created outside Nest (a script, a seeder) or one initialised after the app (`manualInitialization`).
 *
 * Before attaching it checks every entity's ID properties against the layout and, when the layout is wider than
 * 53 bits, asks the database for 2^53 + 1 to prove the driver returns 64-bit integers exactly. A DataSource without
 * `@GeneratedId()` entities is left as it is.
 *
 * @throws GeneratedIdTypeError a `number` property with a layout wider than 53 bits, or a column type that cannot
 *   hold the layout's IDs exactly on this database
 * @throws IdPrecisionLossError the driver rounds 64-bit integers
 * @throws DataSourceNotInitializedError the DataSource is not initialised
 * @throws UnknownGeneratorError a `@GeneratedId({ generator })` name that is not in `generators`
 * @publicApi
 */
export function attachGeneratedIds(
  dataSource: DataSourceLike,
  ids: IdIssuer,
  options: AttachGeneratedIdsOptions = {},
): Promise<() => void> {
  return attachIssuers(dataSource, issuersOf(ids, options.generators), options);
}

/** {@link attachGeneratedIds} with issuers by name, as `SnowflakeTypeOrmModule` finds them. @internal */
export async function attachIssuers(
  dataSource: DataSourceLike,
  issuers: IdIssuers,
  options: Omit<AttachGeneratedIdsOptions, 'generators'> = {},
): Promise<() => void> {
  const name = options.name ?? 'default';
  const logger = options.logger ?? console;
  if (!dataSource.isInitialized) throw new DataSourceNotInitializedError(name);
  if (dataSource.subscribers.some((subscriber) => subscriber instanceof GeneratedIdSubscriber)) {
    logger.warn(
      `The TypeORM DataSource "${name}" already fills @GeneratedId() columns (from SnowflakeTypeOrmModule or ` +
        'an earlier attachGeneratedIds() call); the first one keeps doing so.',
    );
    return () => undefined;
  }

  const subscriber = new GeneratedIdSubscriber(issuers);
  // Checks every entity now, so a wrong property type or generator name fails the bootstrap rather than the first
  // insert.
  let hasIds = false;
  let widestBits = 0;
  for (const metadata of dataSource.entityMetadatas) {
    for (const field of subscriber.fieldsOf(metadata)) {
      checkColumnHolds(field, dataSource.options.type, field.ids.layout.totalBits);
      hasIds = true;
      widestBits = Math.max(widestBits, field.ids.layout.totalBits);
    }
  }
  // A DataSource without `@GeneratedId()` entities (entities are fixed once it is initialised) gets no subscriber:
  // it would only cost every insert a broadcast call.
  if (!hasIds) return () => undefined;
  if (widestBits > 53) {
    const probe = await probePrecision(dataSource, name);
    if (!probe.checked) {
      logger.warn(
        `Cannot check whether the TypeORM DataSource "${name}" (${dataSource.options.type}) returns 64-bit integers ` +
          'exactly; IDs that come back as rounded numbers fail when read.',
      );
    }
    if (probe.bigintPragmas) {
      logger.warn(
        `The SQLite DataSource "${name}" returns PRAGMA results as bigints (defaultSafeIntegers), which TypeORM's ` +
          'schema reader misreads: `synchronize` and migration generation would rebuild tables with nullable columns ' +
          "or unique indexes. Use `driver: safeIntegerDriver(Database)` from 'nestjs-snowflake/typeorm' instead.",
      );
    }
  }
  dataSource.subscribers.push(subscriber);
  return () => {
    const index = dataSource.subscribers.indexOf(subscriber);
    if (index >= 0) dataSource.subscribers.splice(index, 1);
  };
}
