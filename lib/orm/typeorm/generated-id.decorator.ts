import { Column, PrimaryColumn } from 'typeorm';
import { GeneratedIdTypeError } from './generated-id.errors.js';
import { checkDeclaredColumnType, columnTypeName } from './generated-id.column-type.js';
import { addGeneratedIdField, reflectMetadata, type GeneratedIdJsType } from './generated-id.metadata.js';
import type { GeneratedIdOptions } from './generated-id.options.js';
import { generatedIdTransformer } from './generated-id.transformer.js';

/**
 * Makes the property a snowflake-ID column, the primary key by default, and fills it on insert when it is absent
 * (`undefined` or `null`): through `save()` (cascaded relations included), `insert()`, query-builder inserts and bulk
 * inserts, each row its own ID. `SnowflakeTypeOrmModule` attaches the filling subscriber to the app's TypeORM
 * DataSources.
 *
 * The declared type chooses the JS type: `string` a decimal string, `bigint` a bigint, `number` a number (only with
 * a layout of 53 bits or fewer; otherwise bootstrap fails naming the property).
 *
 * @example
 * ```ts
 * @Entity()
 * export class User {
 *   @GeneratedId()
 *   id!: string;
 *
 *   @GeneratedId({ primary: false, name: 'public_id' })
 *   publicId!: bigint;
 * }
 *
 * @Entity()
 * export class Order {
 *   @GeneratedId({ shardFrom: 'userId' }) // every order of a user in the user's shard
 *   id!: bigint;
 *
 *   @Column({ type: 'bigint' })
 *   userId!: string;
 * }
 * ```
 *
 * @publicApi
 */
export function GeneratedId(options: GeneratedIdOptions = {}): PropertyDecorator {
  return (target: object, propertyKey: string | symbol): void => {
    const entityName = (target as { constructor?: { name?: string } }).constructor?.name ?? 'entity';
    const propertyName = String(propertyKey);
    if (typeof propertyKey === 'symbol') {
      throw new GeneratedIdTypeError(entityName, propertyName, 'the property must have a string name, not a symbol.');
    }
    const api = reflectMetadata();
    if (api === undefined) {
      throw new GeneratedIdTypeError(
        entityName,
        propertyName,
        "reflect-metadata is not loaded. Import 'reflect-metadata' once before your entities (Nest apps do).",
      );
    }
    const jsType = options.jsType ?? jsTypeOf(api.getMetadata('design:type', target, propertyKey));
    if (jsType === undefined) {
      throw new GeneratedIdTypeError(
        entityName,
        propertyName,
        'declare the property as `string`, `bigint` or `number`, or pass `{ jsType }`. A union such as ' +
          '`bigint | null` is recorded as Object, and without `emitDecoratorMetadata` no type is recorded at all.',
      );
    }
    if (!['string', 'bigint', 'number'].includes(jsType)) {
      throw new GeneratedIdTypeError(entityName, propertyName, `unknown jsType ${JSON.stringify(jsType)}.`);
    }
    if (options.shardFrom !== undefined && (typeof options.shardFrom !== 'string' || options.shardFrom === '')) {
      throw new GeneratedIdTypeError(entityName, propertyName, '`shardFrom` must name a property of the entity.');
    }
    const columnType = columnTypeName(options.type);
    checkDeclaredColumnType(columnType, entityName, propertyName);
    const primary = options.primary ?? true;
    const column = {
      type: options.type ?? 'bigint',
      ...(options.name === undefined ? {} : { name: options.name }),
      transformer: generatedIdTransformer(`${entityName}.${propertyName}`, jsType),
    };
    if (primary) {
      PrimaryColumn(column)(target, propertyKey);
    } else {
      Column({ ...column, nullable: false, unique: options.unique ?? true })(target, propertyKey);
    }
    const { generator, shardFrom } = options;
    addGeneratedIdField(
      target.constructor,
      {
        propertyName,
        jsType,
        primary,
        entityName,
        ...(columnType === '' ? {} : { columnType }),
        ...(generator === undefined ? {} : { generator }),
        ...(shardFrom === undefined ? {} : { shardFrom }),
      },
      api,
    );
  };
}

function jsTypeOf(designType: unknown): GeneratedIdJsType | undefined {
  if (designType === String) return 'string';
  if (designType === BigInt) return 'bigint';
  if (designType === Number) return 'number';
  return undefined;
}
