/**
 * The few parts of TypeORM this integration touches, described by shape. Code on the main entry's import path uses
 * these instead of importing `typeorm`, so an app without TypeORM still loads the module; a real `DataSource` fits
 * them as it is.
 */

/** The part of an `EntityMetadata` the subscriber reads. @internal */
export interface EntityMetadataLike {
  /** The entity class (or, for an `EntitySchema` without a class, its name). */
  readonly target: unknown;
  readonly name: string;
  /** The entity's columns, to find the property a `shardFrom` names. */
  readonly columns?: readonly ColumnMetadataLike[];
}

/**
 * The part of a `ColumnMetadata` the subscriber reads: `getEntityValue` reads a foreign key through its relation
 * (`order.user.id` for `userId`) when only the related entity is set.
 *
 * @internal
 */
export interface ColumnMetadataLike {
  readonly propertyName: string;
  getEntityValue?(entity: object): unknown;
}

/** The part of a TypeORM `DataSource` the integration reads. @publicApi */
export interface DataSourceLike {
  readonly options: { readonly type: string };
  readonly isInitialized: boolean;
  readonly entityMetadatas: readonly EntityMetadataLike[];
  /** TypeORM broadcasts insert events to every object in this list. */
  readonly subscribers: unknown[];
  query(query: string, parameters?: unknown[]): Promise<unknown>;
}

/** The part of TypeORM's `InsertEvent` the subscriber reads. @internal */
export interface InsertEventLike {
  /** The entity, or for `insert()` and query-builder inserts the plain object of values. */
  readonly entity: unknown;
  readonly metadata: EntityMetadataLike;
}

/** Tells whether a value looks like a TypeORM `DataSource`, without importing TypeORM. @internal */
export function isDataSourceLike(value: unknown): value is DataSourceLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof DataSourceLike | 'driver' | 'manager', unknown>>;
  return (
    Array.isArray(candidate.subscribers) &&
    Array.isArray(candidate.entityMetadatas) &&
    typeof candidate.isInitialized === 'boolean' &&
    typeof candidate.query === 'function' &&
    typeof candidate.options === 'object' &&
    candidate.options !== null &&
    typeof candidate.driver === 'object' &&
    typeof candidate.manager === 'object'
  );
}
