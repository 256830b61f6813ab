import type { SnowflakeIdForm } from '../core/id-form.js';

/** What `@ToSnowflakeId()` records on a property, for `@IsSnowflakeId()` to read. @internal */
export interface ToSnowflakeIdMetadata {
  form?: SnowflakeIdForm;
  to: 'bigint' | 'string';
}

const TO_SNOWFLAKE_ID = Symbol('snowflake:to-snowflake-id');

/** @internal */
export function writeMetadata(target: object, property: string | symbol, metadata: ToSnowflakeIdMetadata): void {
  Reflect.defineMetadata(TO_SNOWFLAKE_ID, metadata, target, property);
}

/** The metadata of a property of `instance` (found through its prototype chain, so subclasses inherit it). @internal */
export function readMetadata(instance: object, property: string): ToSnowflakeIdMetadata | undefined {
  return Reflect.getMetadata(TO_SNOWFLAKE_ID, instance, property) as ToSnowflakeIdMetadata | undefined;
}
