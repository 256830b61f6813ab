import type { ColumnType } from 'typeorm';
import type { GeneratedIdJsType } from './generated-id.metadata.js';

/**
 * Options of {@link GeneratedId}.
 *
 * @publicApi
 */
export interface GeneratedIdOptions {
  /** The column type. A 64-bit integer keeps IDs compact and ordered; pass `'varchar'` to store them as text. @default 'bigint' */
  type?: ColumnType;
  /** The column name. @default the naming strategy's name for the property */
  name?: string;
  /** Make the column the primary key. With `false` it is an ordinary column that is still filled on insert. @default true */
  primary?: boolean;
  /** For a column that is not the primary key: add a unique constraint. @default true */
  unique?: boolean;
  /**
   * The JS type of the property, when the declared type cannot be read: without `emitDecoratorMetadata`, or for a
   * union such as `bigint | null`, which TypeScript records as `Object`.
   * @default the declared type (`string`, `bigint` or `number`)
   */
  jsType?: GeneratedIdJsType;
  /**
   * The name of the `SnowflakeModule` registration to take IDs from (`SnowflakeModule.forRoot({ name })`). A name the
   * app does not register fails at bootstrap, naming the entity and property. @default the default registration
   */
  generator?: string;
  /**
   * A property of the entity that gives the ID's shard key (a layout with a shard field, such as `'sharded'`):
   * `@GeneratedId({ shardFrom: 'userId' })` puts every order of a user in the user's shard. An insert whose row
   * leaves it `undefined` or `null` fails with `ShardKeyMissingError` rather than land in shard 0.
   */
  shardFrom?: string;
}
