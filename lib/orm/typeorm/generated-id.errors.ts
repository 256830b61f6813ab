import { SnowflakeError } from '../../core/errors.js';

/**
 * A `@GeneratedId()` property whose JS type cannot hold the IDs: its declared type is not `string`, `bigint` or
 * `number`, or it is `number` while the layout is wider than 53 bits. Thrown when the class is declared or when the
 * module attaches to the DataSource at bootstrap, naming the entity and property.
 *
 * @publicApi
 */
export class GeneratedIdTypeError extends SnowflakeError {
  constructor(
    /** The entity class name. */
    readonly entity: string,
    /** The decorated property. */
    readonly property: string,
    reason: string,
  ) {
    super(`@GeneratedId() on ${entity}.${property}: ${reason}`);
  }
}

/**
 * A database driver returns 64-bit integers as rounded JS numbers, so an ID read back would differ from the ID
 * written. Thrown at bootstrap by the probe of each DataSource that holds `@GeneratedId()` entities, and on read when
 * an ID column comes back as an unsafe number. The message says which driver option fixes it.
 *
 * @publicApi
 */
export class IdPrecisionLossError extends SnowflakeError {
  constructor(
    /** The DataSource (`default` or the name given to TypeOrmModule), or the column that was read. */
    readonly where: string,
    /** What came back instead of the exact value. */
    readonly received: unknown,
    fix: string,
  ) {
    super(
      `${where} returned a 64-bit integer as the JS number ${String(received)}, which rounds IDs above 2^53 ` +
        `(9007199254740993 would read back as 9007199254740992). ${fix}`,
    );
  }
}

/**
 * `attachGeneratedIds()` was given a DataSource that is not initialised yet. TypeORM replaces the subscriber list on
 * `initialize()`, so a subscriber attached before it would be lost.
 *
 * @publicApi
 */
export class DataSourceNotInitializedError extends SnowflakeError {
  constructor(readonly dataSourceName: string) {
    super(
      `The TypeORM DataSource "${dataSourceName}" is not initialised, so @GeneratedId() columns cannot be attached ` +
        'to it (initialize() replaces its subscribers). Call attachGeneratedIds(dataSource, idService) after ' +
        'dataSource.initialize().',
    );
  }
}

/**
 * `SnowflakeTypeOrmModule` (or `SnowflakeDrizzleModule`) found no `IdService` in the application, so it has nothing
 * to fill ID columns from. Thrown at bootstrap.
 *
 * @publicApi
 */
export class IdServiceNotFoundError extends SnowflakeError {
  constructor(
    /** The integration module that looked: `SnowflakeTypeOrmModule` or `SnowflakeDrizzleModule`. */
    readonly module: string = 'SnowflakeTypeOrmModule',
  ) {
    super(
      `${module} found no IdService in the application. Import SnowflakeModule.forRoot(…) or ` +
        'forRootAsync(…) in the app as well (it need not be global).',
    );
  }
}

/**
 * A row reached the INSERT without its `@GeneratedId()` value: no subscriber filled it. Thrown by the column's
 * transformer when TypeORM writes the row, instead of the database's NOT NULL error, naming what is missing.
 *
 * @publicApi
 */
export class GeneratedIdNotFilledError extends SnowflakeError {
  constructor(
    /** `Entity.property` of the column. */
    readonly column: string,
  ) {
    super(
      `${column} has no ID at insert: @GeneratedId() columns are filled by SnowflakeTypeOrmModule, and none is ` +
        'attached to this DataSource. To fix: import SnowflakeTypeOrmModule beside SnowflakeModule.forRoot(…) and ' +
        "TypeOrmModule.forRoot(…) (import { SnowflakeTypeOrmModule } from 'nestjs-snowflake/typeorm'), or, without " +
        'Nest, call attachGeneratedIds(dataSource, idService) after dataSource.initialize(). A query-builder insert ' +
        'with .callListeners(false) skips it too: set the ID there yourself (idService.next()).',
    );
  }
}
