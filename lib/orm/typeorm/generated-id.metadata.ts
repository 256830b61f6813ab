/** The JS type an ID property holds. @publicApi */
export type GeneratedIdJsType = 'string' | 'bigint' | 'number';

/** What `@GeneratedId()` records about one property. @internal */
export interface GeneratedIdField {
  readonly propertyName: string;
  readonly jsType: GeneratedIdJsType;
  readonly primary: boolean;
  /** The class that declared the property, for messages. */
  readonly entityName: string;
  /** The column type given to `@GeneratedId({ type })`, by name (generated-id.column-type.ts); absent for the default. */
  readonly columnType?: string;
  /** The registration IDs come from; undefined for the default one. */
  readonly generator?: string;
  /** The property whose value is the shard key, if the ID carries a shard. */
  readonly shardFrom?: string;
}

/**
 * Reflect-metadata key of the fields on an entity class. Namespaced like Nest's own keys; the list lives on the class
 * itself, so nothing is kept in module state.
 *
 * @internal
 */
export const GENERATED_ID_FIELDS = 'snowflake:generated-id-fields';

interface ReflectMetadataApi {
  getMetadata(key: unknown, target: object, property?: string | symbol): unknown;
  defineMetadata(key: unknown, value: unknown, target: object, property?: string | symbol): void;
}

/** The `reflect-metadata` API, which Nest and TypeORM load; undefined when nothing has loaded it. @internal */
export function reflectMetadata(): ReflectMetadataApi | undefined {
  const api = Reflect as unknown as Partial<ReflectMetadataApi>;
  return typeof api.getMetadata === 'function' && typeof api.defineMetadata === 'function'
    ? (api as ReflectMetadataApi)
    : undefined;
}

/** Adds a field to a class's list, keeping those inherited from a base class. @internal */
export function addGeneratedIdField(entityClass: object, field: GeneratedIdField, api: ReflectMetadataApi): void {
  // getMetadata walks the prototype chain, so a subclass starts from its base class's fields.
  const inherited = (api.getMetadata(GENERATED_ID_FIELDS, entityClass) as GeneratedIdField[] | undefined) ?? [];
  const fields = inherited.filter((existing) => existing.propertyName !== field.propertyName);
  api.defineMetadata(GENERATED_ID_FIELDS, [...fields, field], entityClass);
}

/** The `@GeneratedId()` fields of an entity class, its base classes' included; empty for anything else. @internal */
export function generatedIdFields(target: unknown): readonly GeneratedIdField[] {
  if (typeof target !== 'function') return [];
  const fields = reflectMetadata()?.getMetadata(GENERATED_ID_FIELDS, target) as GeneratedIdField[] | undefined;
  return fields ?? [];
}
