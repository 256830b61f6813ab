import { issueOrWait, type SnowflakeIdSource } from '../id-issuer.js';
import type { IdEncoding, IdPlan } from './prisma-id.plan.js';

type Data = Record<string, unknown>;

/** A place an ID goes: the field of a (copied) input object. */
interface Slot {
  readonly target: Data;
  readonly field: string;
  readonly as: IdEncoding;
  /** Where the ID comes from: the model's own generator, or the extension's. */
  readonly source: SnowflakeIdSource;
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
        if ('update' in args) out.update = this.updateData(model, args.update, slots);
        break;
      case 'update':
        if ('data' in args) out.data = this.updateData(model, args.data, slots);
        break;
    }
    for (const slot of slots) {
      // A used-up sequence or a lease being re-claimed waits, when the source can, instead of failing the query.
      const id = await issueOrWait(slot.source);
      slot.target[slot.field] = slot.as === 'bigint' ? id : id.toString();
    }
    return out;
  }

  /** Create data of one row: fill absent ID fields, then walk the relation fields. */
  private createData(model: string, data: unknown, slots: Slot[]): unknown {
    const plan = this.plan.get(model);
    if (plan === undefined || !isPlainObject(data)) return data;
    const out: Data = { ...data };
    const source = this.sources.get(model) ?? this.source;
    for (const { field, as } of plan.ids) {
      // `undefined` is how Prisma spells "not given"; null or any other value is the caller's choice.
      if (out[field] === undefined) slots.push({ target: out, field, as, source });
    }
    this.walkRelations(plan.relations, out, slots);
    return out;
  }

  /** Update data of one row: its own ID stays, but nested writes may create related rows. */
  private updateData(model: string, data: unknown, slots: Slot[]): unknown {
    const plan = this.plan.get(model);
    if (plan === undefined || !isPlainObject(data)) return data;
    const out: Data = { ...data };
    this.walkRelations(plan.relations, out, slots);
    return out;
  }

  private walkRelations(relations: ReadonlyMap<string, string>, out: Data, slots: Slot[]): void {
    for (const [field, target] of relations) {
      if (out[field] !== undefined) out[field] = this.nestedWrites(target, out[field], slots);
    }
  }

  /** The nested-write object of a relation field, such as `{ create: [...], connect: {...} }`. */
  private nestedWrites(target: string, writes: unknown, slots: Slot[]): unknown {
    if (!isPlainObject(writes)) return writes;
    const out: Data = { ...writes };
    if (out.create !== undefined) {
      out.create = mapOneOrMany(out.create, (row) => this.createData(target, row, slots));
    }
    if (isPlainObject(out.createMany) && out.createMany.data !== undefined) {
      const { data } = out.createMany;
      out.createMany = { ...out.createMany, data: mapOneOrMany(data, (row) => this.createData(target, row, slots)) };
    }
    if (out.connectOrCreate !== undefined) {
      out.connectOrCreate = mapOneOrMany(out.connectOrCreate, (entry) =>
        isPlainObject(entry) && entry.create !== undefined
          ? { ...entry, create: this.createData(target, entry.create, slots) }
          : entry,
      );
    }
    if (out.upsert !== undefined) {
      out.upsert = mapOneOrMany(out.upsert, (entry) => {
        if (!isPlainObject(entry)) return entry;
        const copy: Data = { ...entry };
        if (copy.create !== undefined) copy.create = this.createData(target, copy.create, slots);
        if (copy.update !== undefined) copy.update = this.updateData(target, copy.update, slots);
        return copy;
      });
    }
    if (out.update !== undefined) {
      out.update = mapOneOrMany(out.update, (entry) => this.nestedUpdate(target, entry, slots));
    }
    return out;
  }

  /**
   * A nested `update` is `{ where, data }` on a to-many relation, and either that or the data itself on a
   * to-one relation. It is the wrapper when it holds `data` (and maybe `where`) and the model has no field of
   * either name.
   */
  private nestedUpdate(target: string, entry: unknown, slots: Slot[]): unknown {
    if (!isPlainObject(entry)) return entry;
    const fields = this.plan.get(target)?.fieldNames;
    const keys = Object.keys(entry);
    const isWrapper =
      isPlainObject(entry.data) &&
      keys.every((k) => k === 'data' || k === 'where') &&
      !keys.some((k) => fields?.has(k));
    return isWrapper
      ? { ...entry, data: this.updateData(target, entry.data, slots) }
      : this.updateData(target, entry, slots);
  }
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
