/**
 * A field as the extension needs it. The shape is a subset of a DMMF field (`getDMMF()` of `@prisma/internals`),
 * so a DMMF datamodel can be passed as is.
 *
 * @publicApi
 */
export interface PrismaFieldLike {
  readonly name: string;
  /** `scalar`, `enum`, `object` (a relation or a composite type) or `unsupported`. */
  readonly kind: string;
  /** The scalar type (`BigInt`, `String`, …), the enum or the related model's name. */
  readonly type: string;
  readonly isList?: boolean;
  /** The field's `///` doc comment, without the slashes. */
  readonly documentation?: string;
  /** A relation's name (Prisma names unnamed ones `<A>To<B>`, models in alphabetical order). */
  readonly relationName?: string;
  /** On the side of a relation that holds the foreign key: its scalar fields (`@relation(fields: [...])`). */
  readonly relationFromFields?: readonly string[];
  /** The related model's fields they reference (`@relation(references: [...])`). */
  readonly relationToFields?: readonly string[];
}

/**
 * A model: its name and fields, in DMMF shape.
 *
 * @publicApi
 */
export interface PrismaModelLike {
  readonly name: string;
  readonly fields: readonly PrismaFieldLike[];
}

/**
 * The models of a schema in DMMF shape: `{ models: [...] }`, as `(await getDMMF({ datamodel })).datamodel`
 * returns it, or as the extension parses it from schema text.
 *
 * @publicApi
 */
export interface PrismaDatamodelLike {
  readonly models: readonly PrismaModelLike[];
}

/** The runtime data model a generated Prisma 7 client carries: fields without documentation, keyed by model. */
interface RuntimeDataModel {
  models: Record<string, { fields: PrismaFieldLike[] }>;
}

/**
 * What a generated client keeps about its schema. Both properties are internal to Prisma, so each is checked
 * before use: the runtime data model has names, types and relations but no doc comments (Prisma dropped them
 * from the generated client in 6.16); the inline schema is the schema text, which has them.
 */
export interface ClientSchemaInfo {
  datamodel?: PrismaDatamodelLike;
  schemaText?: string;
}

/** @internal */
export function readClientSchemaInfo(client: unknown): ClientSchemaInfo {
  const info: ClientSchemaInfo = {};
  if (typeof client !== 'object' || client === null) return info;
  const internal = client as { _runtimeDataModel?: unknown; _engineConfig?: { inlineSchema?: unknown } };
  const runtime = internal._runtimeDataModel as RuntimeDataModel | undefined;
  if (typeof runtime?.models === 'object' && runtime.models !== null) {
    info.datamodel = {
      models: Object.entries(runtime.models)
        .filter(([, model]) => Array.isArray(model?.fields))
        .map(([name, model]) => ({ name, fields: model.fields })),
    };
  }
  const text = internal._engineConfig?.inlineSchema;
  if (typeof text === 'string' && text.length > 0) info.schemaText = text;
  return info;
}
