import { ShardKeyMissingError } from '../../core/errors.js';
import type { ShardKey } from '../../core/shard-key.js';
import { checkShard, issueOrWait, type SnowflakeIdSource } from '../id-issuer.js';
import type { IdEncoding, IdPlan, ShardPlan } from './prisma-id.plan.js';

type Data = Record<string, unknown>;

/** A place an ID goes: the field of a (copied) input object. */
interface Slot {
  readonly target: Data;
  readonly field: string;
  readonly as: IdEncoding;
  /** Where the ID comes from: the model's own generator, or the extension's. */
  readonly source: SnowflakeIdSource;
  /** For an ID that carries a shard: reads the key when the slot is filled (it may be another slot's new ID). */
  readonly shard?: {
    readonly key: () => unknown;
    readonly model: string;
    readonly from: string;
    readonly bits: number;
  };
}

/** The row a nested write hangs under: its model, the relation walked from it, and its known values. */
interface ParentRow {
  readonly model: string;
  readonly relationName: string | undefined;
  readonly values: Data;
}

/** The operations whose arguments can create rows, directly or through nested writes. */
export const FILLED_OPERATIONS = ['create', 'createMany', 'createManyAndReturn', 'upsert', 'update'] as const;

/** @internal */
export type FilledOperation = (typeof FILLED_OPERATIONS)[number];

/**
 * Fills the ID fields of every row an operation would create, including rows created through relation fields
 * (`create`, `createMany`, `connectOrCreate`, `upsert`, and nested `update`s that contain them).
 *
 * The caller's objects are never changed: each object on the way to a filled field is copied. Reusing one
 * `data` object for two creates must give two IDs, not the first one twice.
 *
 * @internal
 */
export class PrismaIdFiller {
  constructor(
    private readonly plan: IdPlan,
    private readonly source: SnowflakeIdSource,
    /** Generators of their own for some models, by model name (the `generators` option). */
    private readonly sources: ReadonlyMap<string, SnowflakeIdSource> = new Map(),
    /** The shard bits of each model whose IDs carry a shard (the `shardFrom` option), checked against its source. */
    private readonly shardBits: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** Whether writes to the model can create rows with fields to fill; if not, its queries pass through. */
  concerns(model: string | undefined): model is string {
    return model !== undefined && this.plan.has(model);
  }

  /** The operation's arguments with IDs filled in. */
  async fill(model: string, operation: FilledOperation, args: unknown): Promise<unknown> {
    if (!isPlainObject(args)) return args;
    const slots: Slot[] = [];
    const out: Data = { ...args };
    switch (operation) {
      case 'create':
        if ('data' in args) out.data = this.createData(model, args.data, slots);
        break;
      case 'createMany':
      case 'createManyAndReturn':
        if ('data' in args) out.data = mapOneOrMany(args.data, (row) => this.createData(model, row, slots));
        break;
      case 'upsert':
        // Only the create branch makes a row; the update branch keeps the row's ID but may create related rows.
        if ('create' in args) out.create = this.createData(model, args.create, slots);
        if ('update' in args) out.update = this.updateData(model, args.update, slots, whereOf(args));
        break;
      case 'update':
        if ('data' in args) out.data = this.updateData(model, args.data, slots, whereOf(args));
        break;
    }
    await this.fillSlots(slots);
    return out;
  }

  /**
   * Issues an ID into every slot. A slot whose shard key is another slot's new ID (a row created under its parent)
   * waits for that one, so slots are filled in rounds; a round that fills nothing leaves keys no row sets.
   */
  private async fillSlots(slots: readonly Slot[]): Promise<void> {
    let pending = slots;
    while (pending.length > 0) {
      const later: Slot[] = [];
      for (const slot of pending) {
        const key = slot.shard?.key();
        if (slot.shard !== undefined && (key === undefined || key === null)) {
          later.push(slot);
          continue;
        }
        // A used-up sequence or a lease being re-claimed waits, when the source can, instead of failing the query.
        const options = key === undefined ? undefined : { shardKey: key as ShardKey };
        const issued = await issueOrWait(slot.source, options);
        const id = options === undefined ? issued : checkShard(issued, options.shardKey, slot.shard!.bits);
        slot.target[slot.field] = slot.as === 'bigint' ? id : id.toString();
      }
      if (later.length === pending.length) {
        const { model, from } = later[0].shard!;
        throw new ShardKeyMissingError(
          `${model}.${later[0].field}`,
          from,
          `Set \`${from}\`, connect the related row by the field it references, or create the row under it.`,
        );
      }
      pending = later;
    }
  }

  /** Create data of one row: fill absent ID fields, then walk the relation fields. */
  private createData(model: string, data: unknown, slots: Slot[], parent?: ParentRow): unknown {
    const plan = this.plan.get(model);
    if (plan === undefined || !isPlainObject(data)) return data;
    const out: Data = { ...data };
    const source = this.sources.get(model) ?? this.source;
    for (const { field, as } of plan.ids) {
      // `undefined` is how Prisma spells "not given"; null or any other value is the caller's choice.
      if (out[field] !== undefined) continue;
      const { shard } = plan;
      const bits = this.shardBits.get(model);
      slots.push(
        shard === undefined || bits === undefined
          ? { target: out, field, as, source }
          : {
              target: out,
              field,
              as,
              source,
              shard: { key: () => shardKeyOf(shard, out, parent), model, from: shard.from, bits },
            },
      );
    }
    this.walkRelations(model, out, slots, out);
    return out;
  }

  /** Update data of one row (known by `where`): its own ID stays, but nested writes may create related rows. */
  private updateData(model: string, data: unknown, slots: Slot[], where: Data = {}): unknown {
    const plan = this.plan.get(model);
    if (plan === undefined || !isPlainObject(data)) return data;
    const out: Data = { ...data };
    this.walkRelations(model, out, slots, where);
    return out;
  }

  /** Walks the relation fields of a row; `values` are the row's known fields, which rows created under it read. */
  private walkRelations(model: string, out: Data, slots: Slot[], values: Data): void {
    const plan = this.plan.get(model)!;
    for (const [field, target] of plan.relations) {
      if (out[field] === undefined) continue;
      const parent: ParentRow = { model, relationName: plan.relationNames.get(field), values };
      out[field] = this.nestedWrites(target, out[field], slots, parent, plan.listRelations.has(field));
    }
  }

  /** The nested-write object of a relation field, such as `{ create: [...], connect: {...} }`. */
  private nestedWrites(target: string, writes: unknown, slots: Slot[], parent: ParentRow, toMany: boolean): unknown {
    if (!isPlainObject(writes)) return writes;
    const out: Data = { ...writes };
    if (out.create !== undefined) {
      out.create = mapOneOrMany(out.create, (row) => this.createData(target, row, slots, parent));
    }
    if (isPlainObject(out.createMany) && out.createMany.data !== undefined) {
      const { data } = out.createMany;
      out.createMany = {
        ...out.createMany,
        data: mapOneOrMany(data, (row) => this.createData(target, row, slots, parent)),
      };
    }
    if (out.connectOrCreate !== undefined) {
      out.connectOrCreate = mapOneOrMany(out.connectOrCreate, (entry) =>
        isPlainObject(entry) && entry.create !== undefined
          ? { ...entry, create: this.createData(target, entry.create, slots, parent) }
          : entry,
      );
    }
    if (out.upsert !== undefined) {
      out.upsert = mapOneOrMany(out.upsert, (entry) => {
        if (!isPlainObject(entry)) return entry;
        const copy: Data = { ...entry };
        if (copy.create !== undefined) copy.create = this.createData(target, copy.create, slots, parent);
        if (copy.update !== undefined) copy.update = this.updateData(target, copy.update, slots, whereOf(copy));
        return copy;
      });
    }
    if (out.update !== undefined) {
      out.update = mapOneOrMany(out.update, (entry) => this.nestedUpdate(target, entry, slots, toMany));
    }
    return out;
  }

  /**
   * A nested `update` is `{ where, data }` on a to-many relation (a list field: whatever fields the related model
   * has, `data Json` among them), and either that or the data itself on a to-one relation. There it is the wrapper
   * when it holds `data` (and maybe `where`) and the model has no field of either name.
   */
  private nestedUpdate(target: string, entry: unknown, slots: Slot[], toMany: boolean): unknown {
    if (!isPlainObject(entry)) return entry;
    const fields = this.plan.get(target)?.fieldNames;
    const keys = Object.keys(entry);
    const isWrapper =
      isPlainObject(entry.data) &&
      keys.every((k) => k === 'data' || k === 'where') &&
      (toMany || !keys.some((k) => fields?.has(k)));
    return isWrapper
      ? { ...entry, data: this.updateData(target, entry.data, slots, whereOf(entry)) }
      : this.updateData(target, entry, slots);
  }
}

/**
 * The shard key of a row being created: its own key field; else the field its relation references, read from a
 * related row it connects or creates, or from the row it is created under.
 */
function shardKeyOf(shard: ShardPlan, row: Data, parent: ParentRow | undefined): unknown {
  const own = row[shard.from];
  if (own !== undefined && own !== null) return own;
  for (const via of shard.via) {
    const writes = row[via.relation];
    if (isPlainObject(writes)) {
      for (const related of [writes.connect, writes.create]) {
        if (isPlainObject(related) && related[via.reference] != null) return related[via.reference];
      }
    }
    const under =
      parent !== undefined &&
      parent.model === via.parent &&
      (parent.relationName === undefined || via.relationName === undefined || parent.relationName === via.relationName);
    if (under && parent.values[via.reference] != null) return parent.values[via.reference];
  }
  return undefined;
}

function whereOf(args: Data): Data {
  return isPlainObject(args.where) ? args.where : {};
}

function mapOneOrMany(value: unknown, map: (item: unknown) => unknown): unknown {
  return Array.isArray(value) ? value.map(map) : map(value);
}

/** Input objects are plain; a Date, Decimal, Buffer or `Prisma.skip` is a value and is never walked or copied. */
function isPlainObject(value: unknown): value is Data {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
