import { SnowflakeConfigError, SnowflakeError } from '../../core/errors.js';
import type { SnowflakeIdSource } from '../id-issuer.js';

/**
 * A Drizzle snowflake column asked its {@link SnowflakeIdSlot} for an ID before anything was bound to it: the app
 * does not import `SnowflakeDrizzleModule.forRoot({ ids })` for this slot, or inserts before the app has bootstrapped.
 *
 * @publicApi
 */
export class DrizzleIdsNotBoundError extends SnowflakeError {
  constructor(
    /** The generator the slot stands for (`default` unless named). */
    readonly generator: string,
  ) {
    super(
      `No IdService is bound to the Drizzle ID slot of generator "${generator}", so the insert has no ID. To fix: ` +
        "import SnowflakeDrizzleModule.forRoot({ ids: [slot] }) from 'nestjs-snowflake/drizzle' beside " +
        'SnowflakeModule.forRoot(…) and insert once the app has bootstrapped, or, without Nest, call ' +
        'slot.bind(idService) first.',
    );
  }
}

/**
 * Where the snowflake columns of Drizzle tables take their IDs from. Tables are declared at module scope, before
 * Nest has built the `IdService` (its worker ID comes from a lease claimed at bootstrap), so a column holds this
 * slot, and `SnowflakeDrizzleModule` binds the app's `IdService` to it at bootstrap and unbinds it at shutdown.
 *
 * @publicApi
 */
export class SnowflakeIdSlot implements SnowflakeIdSource {
  private source: SnowflakeIdSource | undefined;

  constructor(
    /** The `SnowflakeModule` registration to bind, by name. @default 'default' */
    readonly generator: string = 'default',
  ) {}

  /** Whether an ID source is bound. */
  get bound(): boolean {
    return this.source !== undefined;
  }

  /**
   * Binds an ID source (an `IdService`, or anything with `next(): bigint`); returns the function that unbinds it.
   * @throws SnowflakeConfigError the slot is bound to another source (two apps in one process need a slot each)
   */
  bind(source: SnowflakeIdSource): () => void {
    if (this.source !== undefined && this.source !== source) {
      throw new SnowflakeConfigError(
        'ids',
        `the Drizzle ID slot of generator "${this.generator}" is bound to another IdService already; give each ` +
          'app that runs in this process a slot (and tables) of its own.',
      );
    }
    this.source = source;
    return () => {
      if (this.source === source) this.source = undefined;
    };
  }

  /** @throws DrizzleIdsNotBoundError nothing is bound */
  next(): bigint {
    if (this.source === undefined) throw new DrizzleIdsNotBoundError(this.generator);
    return this.source.next();
  }
}

/**
 * A slot for the snowflake columns of Drizzle tables, bound by `SnowflakeDrizzleModule.forRoot({ ids: [slot] })`.
 *
 * @example
 * export const ids = snowflakeIdSlot();
 * export const posts = pgTable('posts', { id: pgSnowflakeId('id', ids).primaryKey(), title: text('title') });
 * @publicApi
 */
export function snowflakeIdSlot(options: { generator?: string } = {}): SnowflakeIdSlot {
  return new SnowflakeIdSlot(options.generator);
}
