import { SnowflakeConfigError } from '../../core/errors.js';
import type { ClientSchemaInfo, PrismaDatamodelLike, PrismaFieldLike, PrismaModelLike } from './prisma-datamodel.js';
import { PrismaIdFieldError, PrismaModelMetadataError } from './prisma-id.errors.js';
import { parsePrismaSchema } from './prisma-schema.parser.js';
import type { SnowflakePrismaOptions } from './snowflake-prisma.options.js';

/** How an ID is written to a field: Prisma takes a bigint for `BigInt`, and a string for `String` and `Decimal`. */
export type IdEncoding = 'bigint' | 'string';

/** @internal */
export interface ModelPlan {
  /** The model's own fields to fill. */
  readonly ids: ReadonlyArray<{ readonly field: string; readonly as: IdEncoding }>;
  /** Relation fields leading to a model with fields to fill (directly or further down): field → related model. */
  readonly relations: ReadonlyMap<string, string>;
  /** Every field name of the model, to tell a nested `update: { data }` wrapper from update data. */
  readonly fieldNames: ReadonlySet<string>;
  /** Relation field → relation name, to find the back-relation of a nested create. */
  readonly relationNames: ReadonlyMap<string, string | undefined>;
  /** The relation fields known to be lists (to-many), whose nested `update` is always `{ where, data }`. */
  readonly listRelations: ReadonlySet<string>;
  /** Where the shard key of the model's IDs comes from, when they carry one. */
  readonly shard?: ShardPlan;
}

/** The field that gives a model's shard key, and the relations through which the key can be read instead. */
export interface ShardPlan {
  readonly from: string;
  /** Relations of the model whose foreign key is `from`: the key is the related row's `reference` field. */
  readonly via: ReadonlyArray<{
    readonly relation: string;
    readonly parent: string;
    readonly relationName?: string;
    readonly reference: string;
  }>;
}

/** Only the models whose writes can create a row with fields to fill; the extension passes others through. */
export type IdPlan = ReadonlyMap<string, ModelPlan>;

const DEFAULT_MARKER = '@GeneratedId';

/**
 * Works out, once per client, which fields of which models to fill and which relations to walk, and checks
 * that every such field can hold a 64-bit ID.
 *
 * @internal
 * @throws PrismaIdFieldError for a missing field or one of a type that cannot hold an ID
 * @throws PrismaModelMetadataError when neither the client nor the options describe the models
 */
export function buildIdPlan(client: ClientSchemaInfo, options: SnowflakePrismaOptions): IdPlan {
  const documented = documentedDatamodel(client, options);
  const structure = client.datamodel ?? documented;
  if (structure === undefined || structure.models.length === 0) {
    throw new PrismaModelMetadataError('the client has no runtime data model and no schema was given.');
  }
  const docs = new Map<string, Map<string, PrismaFieldLike>>();
  for (const model of documented?.models ?? []) docs.set(model.name, new Map(model.fields.map((f) => [f.name, f])));
  const models = new Map(structure.models.map((m) => [m.name, m]));

  const marker = options.marker === undefined ? DEFAULT_MARKER : options.marker;
  if (marker !== false && (typeof marker !== 'string' || marker.trim() === '')) {
    throw new SnowflakeConfigError('marker', 'give the doc-comment tag as a non-empty string, or false.');
  }
  const wanted = new Map<string, Set<string>>();
  const want = (model: string, field: string) => {
    const set = wanted.get(model) ?? new Set<string>();
    set.add(field);
    wanted.set(model, set);
  };
  if (marker !== false) {
    const tag = new RegExp(`(^|\\s)${escapeRegExp(marker.trim())}(?![\\w-])`);
    for (const [model, fields] of docs) {
      for (const field of fields.values()) {
        if (field.documentation && tag.test(field.documentation)) want(model, field.name);
      }
    }
  }
  for (const [model, fields] of Object.entries(options.fields ?? {})) {
    for (const field of typeof fields === 'string' ? [fields] : fields) want(model, field);
  }
  if (wanted.size === 0) {
    const where = documented === undefined ? ' (no schema text was available to read doc comments from)' : '';
    throw new SnowflakeConfigError(
      'fields',
      `no field to fill${where}. Mark ID fields with a \`/// ${marker || DEFAULT_MARKER}\` doc comment in ` +
        "schema.prisma and run `prisma generate`, or list them: `{ fields: { User: 'id' } }`.",
    );
  }

  const ids = new Map<string, Array<{ field: string; as: IdEncoding }>>();
  for (const [modelName, fieldNames] of wanted) {
    const model = models.get(modelName);
    for (const fieldName of fieldNames) {
      if (model === undefined) {
        throw new PrismaIdFieldError(
          modelName,
          fieldName,
          `there is no model \`${modelName}\` (models: ${[...models.keys()].join(', ')}). ` +
            'Use the model name as written in schema.prisma.',
        );
      }
      const field = model.fields.find((f) => f.name === fieldName);
      if (field === undefined) {
        throw new PrismaIdFieldError(
          modelName,
          fieldName,
          `the model has no such field (fields: ${model.fields.map((f) => f.name).join(', ')}).`,
        );
      }
      const encoding = encodingOf(modelName, {
        ...field,
        isList: field.isList ?? docs.get(modelName)?.get(fieldName)?.isList,
      });
      const list = ids.get(modelName) ?? [];
      list.push({ field: fieldName, as: encoding });
      ids.set(modelName, list);
    }
  }

  const relationsOf = (modelName: string) =>
    (models.get(modelName)?.fields ?? []).filter((f) => f.kind === 'object' && models.has(f.type));
  // A model needs walking when it has fields to fill or a relation to a model that does, at any depth.
  const reaching = new Set(ids.keys());
  for (let grew = true; grew;) {
    grew = false;
    for (const name of models.keys()) {
      if (!reaching.has(name) && relationsOf(name).some((f) => reaching.has(f.type))) {
        reaching.add(name);
        grew = true;
      }
    }
  }
  const shards = shardPlans(options.shardFrom, models, docs, ids);
  const plan = new Map<string, ModelPlan>();
  for (const name of reaching) {
    const walked = relationsOf(name).filter((f) => reaching.has(f.type));
    const shard = shards.get(name);
    plan.set(name, {
      ids: ids.get(name) ?? [],
      relations: new Map(walked.map((f) => [f.name, f.type])),
      fieldNames: new Set(models.get(name)!.fields.map((f) => f.name)),
      relationNames: new Map(walked.map((f) => [f.name, f.relationName])),
      listRelations: new Set(
        walked.filter((f) => (f.isList ?? docs.get(name)?.get(f.name)?.isList) === true).map((f) => f.name),
      ),
      ...(shard === undefined ? {} : { shard }),
    });
  }
  return plan;
}

/**
 * Checks `shardFrom` and works out, per model, the relations whose foreign key is its shard-key field. Their
 * `fields` and `references` come from the schema text (the client's runtime data model has no foreign keys).
 *
 * @throws PrismaIdFieldError for a model without generated IDs, or a key field that is missing or a relation
 */
function shardPlans(
  shardFrom: SnowflakePrismaOptions['shardFrom'],
  models: ReadonlyMap<string, PrismaModelLike>,
  docs: ReadonlyMap<string, ReadonlyMap<string, PrismaFieldLike>>,
  ids: ReadonlyMap<string, unknown>,
): Map<string, ShardPlan> {
  const plans = new Map<string, ShardPlan>();
  if (shardFrom === undefined) return plans;
  if (shardFrom === null || typeof shardFrom !== 'object') {
    throw new SnowflakeConfigError(
      'shardFrom',
      "expected an object of model → key field, such as { Order: 'userId' }.",
    );
  }
  for (const [modelName, from] of Object.entries(shardFrom)) {
    const model = models.get(modelName);
    if (model === undefined || !ids.has(modelName)) {
      throw new PrismaIdFieldError(
        modelName,
        String(from),
        model === undefined
          ? `\`shardFrom\` names no model \`${modelName}\` (models: ${[...models.keys()].join(', ')}).`
          : `\`shardFrom\` names a model without generated IDs; mark its ID field with \`/// @GeneratedId\` or list it in \`fields\`.`,
      );
    }
    const field = model.fields.find((f) => f.name === from);
    if (field === undefined || field.kind === 'object') {
      throw new PrismaIdFieldError(
        modelName,
        String(from),
        `\`shardFrom\` must name a scalar field of the model (fields: ${model.fields
          .filter((f) => f.kind !== 'object')
          .map((f) => f.name)
          .join(', ')}).`,
      );
    }
    const via: Array<ShardPlan['via'][number]> = [];
    for (const relation of model.fields.filter((f) => f.kind === 'object')) {
      const keys = docs.get(modelName)?.get(relation.name) ?? relation;
      const index = keys.relationFromFields?.indexOf(from) ?? -1;
      const reference = index < 0 ? undefined : keys.relationToFields?.[index];
      if (reference === undefined) continue;
      via.push({
        relation: relation.name,
        parent: relation.type,
        reference,
        ...(relation.relationName === undefined ? {} : { relationName: relation.relationName }),
      });
    }
    plans.set(modelName, { from, via });
  }
  return plans;
}

/** The datamodel to read doc comments (and list-ness) from, most explicit source first. */
function documentedDatamodel(
  client: ClientSchemaInfo,
  options: SnowflakePrismaOptions,
): PrismaDatamodelLike | undefined {
  if (options.datamodel !== undefined) {
    if (!Array.isArray(options.datamodel.models)) {
      throw new SnowflakeConfigError('datamodel', 'expected a DMMF datamodel, an object with a `models` array.');
    }
    return options.datamodel;
  }
  if (options.schema !== undefined) return parsePrismaSchema(options.schema);
  if (client.schemaText !== undefined) return parsePrismaSchema(client.schemaText);
  return undefined;
}

function encodingOf(model: string, field: PrismaFieldLike): IdEncoding {
  if (field.kind === 'object') {
    throw new PrismaIdFieldError(
      model,
      field.name,
      `it is a relation to \`${field.type}\`. Mark the scalar ID field instead.`,
    );
  }
  if (field.isList) {
    throw new PrismaIdFieldError(model, field.name, 'it is a list. Mark a single-valued field.');
  }
  switch (field.type) {
    case 'BigInt':
      return 'bigint';
    case 'String':
    case 'Decimal':
      return 'string';
    case 'Int':
      throw new PrismaIdFieldError(
        model,
        field.name,
        'Int is a 32-bit column and a snowflake ID needs 64 bits. Declare the field `BigInt` ' +
          '(or `String` / `Decimal` to store the decimal string).',
      );
    case 'Float':
      throw new PrismaIdFieldError(
        model,
        field.name,
        'Float rounds integers above 2^53. Declare the field `BigInt` (or `String` / `Decimal`).',
      );
    default:
      throw new PrismaIdFieldError(
        model,
        field.name,
        `a field of type ${field.type} cannot hold an ID. Declare it \`BigInt\`, \`String\` or \`Decimal\`.`,
      );
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
