import { ShardKeyMissingError } from '../../core/errors.js';
import type { NextIdOptions } from '../../core/generator.options.js';
import type { ShardKey } from '../../core/shard-key.js';
import { UnknownGeneratorError } from '../../core/generator-name.errors.js';
import { checkShard, issueOrWait, type IdIssuer } from '../id-issuer.js';
import { GeneratedIdTypeError } from './generated-id.errors.js';
import { DEFAULT_ISSUER, type IdIssuers } from './generated-id.issuers.js';
import { generatedIdFields, type GeneratedIdField, type GeneratedIdJsType } from './generated-id.metadata.js';
import type { ColumnMetadataLike, EntityMetadataLike, InsertEventLike } from './typeorm.structural.js';

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
        const planned: PlannedField = { ...field, ids };
        return field.shardFrom === undefined ? planned : this.shardPlan(planned, metadata);
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

  /** Checks a `shardFrom` against the layout and the entity's columns. @throws GeneratedIdTypeError */
  private shardPlan(field: PlannedField, metadata: EntityMetadataLike): PlannedField {
    const from = field.shardFrom!;
    if ((field.ids.layout.shardBits ?? 0) === 0) {
      throw new GeneratedIdTypeError(
        field.entityName,
        field.propertyName,
        `\`shardFrom: '${from}'\` needs a layout with a shard field; use the 'sharded' preset or set \`layout.shardBits\`.`,
      );
    }
    const columns = metadata.columns;
    if (columns === undefined) return field;
    const shardColumn = columns.find((column) => column.propertyName === from);
    if (shardColumn === undefined) {
      throw new GeneratedIdTypeError(
        field.entityName,
        field.propertyName,
        `\`shardFrom: '${from}'\` names no column of the entity (columns: ` +
          `${columns.map((column) => column.propertyName).join(', ')}).`,
      );
    }
    return { ...field, shardColumn };
  }

  beforeInsert(event: InsertEventLike): void | Promise<void> {
    const row = event.entity as Record<string, unknown> | null | undefined;
    if (row === null || typeof row !== 'object') return;
    const fields = this.fieldsOf(event.metadata);
    for (let index = 0; index < fields.length; index++) {
      const field = fields[index];
      if (row[field.propertyName] !== undefined && row[field.propertyName] !== null) continue;
      const options = field.shardFrom === undefined ? undefined : this.shardOptions(field, row);
      const id = issueOrWait(field.ids, options);
      // The sequence ran out beyond the synchronous wait, or the lease is being re-claimed: wait for it here rather
      // than fail the insert. TypeORM awaits a promise returned from beforeInsert.
      if (typeof id !== 'bigint') return this.fillAsync(row, fields, index, id, options);
      row[field.propertyName] = convert(options === undefined ? id : this.checked(field, id, options), field.jsType);
    }
  }

  /** The shard key of a row. @throws ShardKeyMissingError when the row does not set it */
  private shardOptions(field: PlannedField, row: Record<string, unknown>): NextIdOptions {
    const from = field.shardFrom!;
    // Through the column, a foreign key is read from the related entity too (`order.user.id` for `userId`).
    const key = field.shardColumn?.getEntityValue === undefined ? row[from] : field.shardColumn.getEntityValue(row);
    if (key === undefined || key === null) {
      throw new ShardKeyMissingError(
        `${field.entityName}.${field.propertyName}`,
        from,
        `Set \`${from}\` before the insert (a row created through a one-to-many cascade does not have its ` +
          'foreign key yet: set it, or save the row on its own).',
      );
    }
    return { shardKey: key as ShardKey };
  }

  private checked(field: PlannedField, id: bigint, options: NextIdOptions): bigint {
    return checkShard(id, options.shardKey!, field.ids.layout.shardBits!);
  }

  /** Fills `fields[from]` with the awaited `pending` ID, and the rest through the wait. */
  private async fillAsync(
    row: Record<string, unknown>,
    fields: readonly PlannedField[],
    from: number,
    pending: Promise<bigint>,
    pendingOptions: NextIdOptions | undefined,
  ): Promise<void> {
    const first = await pending;
    row[fields[from].propertyName] = convert(
      pendingOptions === undefined ? first : this.checked(fields[from], first, pendingOptions),
      fields[from].jsType,
    );
    for (let index = from + 1; index < fields.length; index++) {
      const field = fields[index];
      if (row[field.propertyName] !== undefined && row[field.propertyName] !== null) continue;
      const options = field.shardFrom === undefined ? undefined : this.shardOptions(field, row);
      const id = await field.ids.nextAsync(options);
      row[field.propertyName] = convert(options === undefined ? id : this.checked(field, id, options), field.jsType);
    }
  }
}

/** A field and the issuer it takes IDs from. @internal */
/** A field as the subscriber fills it: with its issuer, and the column its shard key is read from when it has one. */
export interface PlannedField extends GeneratedIdField {
  readonly ids: IdIssuer;
  readonly shardColumn?: ColumnMetadataLike;
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
