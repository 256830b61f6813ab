import { UnknownGeneratorError } from '../../module/snowflake.errors.js';
import { issueOrWait, type IdIssuer } from '../id-issuer.js';
import { GeneratedIdTypeError } from './generated-id.errors.js';
import { DEFAULT_ISSUER, type IdIssuers } from './generated-id.issuers.js';
import { generatedIdFields, type GeneratedIdField, type GeneratedIdJsType } from './generated-id.metadata.js';
import type { EntityMetadataLike, InsertEventLike } from './typeorm.structural.js';

/**
 * A TypeORM entity subscriber that fills absent `@GeneratedId()` properties before each insert.
 *
 * TypeORM 1.1 broadcasts `beforeInsert` to subscribers for every row of `save()` (cascaded relations included, all
 * before the first INSERT, so a child's foreign key sees its parent's new ID), of `Repository.insert()` and of
 * query-builder inserts. It does not for a query builder with `.callListeners(false)` or raw SQL.
 *
 * @internal
 */
export class GeneratedIdSubscriber {
  /** Fields per entity metadata, worked out once per entity: a bulk insert calls this for every row. */
  private readonly plans = new WeakMap<EntityMetadataLike, readonly PlannedField[]>();

  constructor(private readonly issuers: IdIssuers) {}

  /**
   * The fields of an entity with the issuer of each, checked against its layout.
   * @throws GeneratedIdTypeError, UnknownGeneratorError
   */
  fieldsOf(metadata: EntityMetadataLike): readonly PlannedField[] {
    let fields = this.plans.get(metadata);
    if (fields === undefined) {
      fields = generatedIdFields(metadata.target).map((field) => {
        const ids = this.issuerOf(field);
        assertFits(field, ids.layout.totalBits);
        return { ...field, ids };
      });
      this.plans.set(metadata, fields);
    }
    return fields;
  }

  private issuerOf(field: GeneratedIdField): IdIssuer {
    const name = field.generator ?? DEFAULT_ISSUER;
    const ids = this.issuers.get(name);
    if (ids !== undefined) return ids;
    const decorator =
      field.generator === undefined ? '@GeneratedId()' : `@GeneratedId({ generator: ${JSON.stringify(name)} })`;
    throw new UnknownGeneratorError(
      name,
      this.issuers.names(),
      `${decorator} on ${field.entityName}.${field.propertyName}`,
    );
  }

  beforeInsert(event: InsertEventLike): void | Promise<void> {
    const row = event.entity as Record<string, unknown> | null | undefined;
    if (row === null || typeof row !== 'object') return;
    const fields = this.fieldsOf(event.metadata);
    for (let index = 0; index < fields.length; index++) {
      const field = fields[index];
      if (row[field.propertyName] !== undefined && row[field.propertyName] !== null) continue;
      const id = issueOrWait(field.ids);
      // The sequence ran out beyond the synchronous wait, or the lease is being re-claimed: wait for it here rather
      // than fail the insert. TypeORM awaits a promise returned from beforeInsert.
      if (typeof id !== 'bigint') return this.fillAsync(row, fields, index, id);
      row[field.propertyName] = convert(id, field.jsType);
    }
  }

  /** Fills `fields[from]` with the awaited `pending` ID, and the rest through the wait. */
  private async fillAsync(
    row: Record<string, unknown>,
    fields: readonly PlannedField[],
    from: number,
    pending: Promise<bigint>,
  ): Promise<void> {
    row[fields[from].propertyName] = convert(await pending, fields[from].jsType);
    for (let index = from + 1; index < fields.length; index++) {
      const field = fields[index];
      if (row[field.propertyName] !== undefined && row[field.propertyName] !== null) continue;
      row[field.propertyName] = convert(await field.ids.nextAsync(), field.jsType);
    }
  }
}

/** A field and the issuer it takes IDs from. @internal */
export interface PlannedField extends GeneratedIdField {
  readonly ids: IdIssuer;
}

function convert(id: bigint, jsType: GeneratedIdJsType): string | bigint | number {
  return jsType === 'bigint' ? id : jsType === 'string' ? id.toString() : Number(id);
}

function assertFits(field: GeneratedIdField, totalBits: number): void {
  if (field.jsType === 'number' && totalBits > 53) {
    throw new GeneratedIdTypeError(
      field.entityName,
      field.propertyName,
      `the property is a number, but IDs of this layout use ${totalBits} bits, more than the 53 a JS number holds ` +
        "exactly. Declare it as `string` or `bigint`, or use the 'js-safe' layout (or another of 53 bits or fewer).",
    );
  }
}
