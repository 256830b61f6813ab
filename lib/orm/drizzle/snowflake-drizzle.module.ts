import { type DynamicModule, Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { UnknownGeneratorError } from '../../core/generator-name.errors.js';
import { findRegistry } from '../../module/snowflake.registry.js';
import { IdServiceNotFoundError } from '../typeorm/generated-id.errors.js';
import { SnowflakeIdSlot } from './drizzle-id.slot.js';

/** Options of {@link SnowflakeDrizzleModule.forRoot}. @publicApi */
export interface SnowflakeDrizzleOptions {
  /** The slots of the app's tables; each is bound to the `IdService` of its `generator`. */
  ids: SnowflakeIdSlot | readonly SnowflakeIdSlot[];
}

const DRIZZLE_OPTIONS = 'SNOWFLAKE:DRIZZLE_OPTIONS';

/** Binds the slots when the module initialises, and unbinds them at shutdown. @internal */
@Injectable()
export class DrizzleSlotBinder implements OnModuleInit, OnApplicationShutdown {
  private readonly unbinders: Array<() => void> = [];

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(DRIZZLE_OPTIONS) private readonly options: SnowflakeDrizzleOptions,
  ) {}

  /**
   * @throws IdServiceNotFoundError the app registers no SnowflakeModule
   * @throws UnknownGeneratorError a slot names a generator the app does not register
   */
  onModuleInit(): void {
    const registry = findRegistry(this.moduleRef);
    if (registry === undefined || registry.names().length === 0) {
      throw new IdServiceNotFoundError('SnowflakeDrizzleModule');
    }
    const { ids: given } = this.options;
    const slots: readonly SnowflakeIdSlot[] = given instanceof SnowflakeIdSlot ? [given] : given;
    for (const slot of slots) {
      const ids = registry.get(slot.generator);
      if (ids === undefined) {
        throw new UnknownGeneratorError(slot.generator, registry.names(), 'a Drizzle ID slot (snowflakeIdSlot)');
      }
      this.unbinders.push(slot.bind(ids));
    }
  }

  onApplicationShutdown(): void {
    for (const unbind of this.unbinders.splice(0)) unbind();
  }
}

/**
 * Binds the app's `IdService`s to the ID slots of its Drizzle tables, so that their snowflake columns fill IDs on
 * insert. Import it beside `SnowflakeModule.forRoot(…)`; SnowflakeModule need not be global.
 *
 * @example
 * ```ts
 * // schema.ts
 * export const ids = snowflakeIdSlot();
 * export const posts = pgTable('posts', { id: pgSnowflakeId('id', ids).primaryKey(), title: text('title') });
 * // app.module.ts
 * @Module({ imports: [SnowflakeModule.forRoot({ redis: { url } }), SnowflakeDrizzleModule.forRoot({ ids })] })
 * ```
 *
 * @publicApi
 */
export class SnowflakeDrizzleModule {
  static forRoot(options: SnowflakeDrizzleOptions): DynamicModule {
    return {
      module: SnowflakeDrizzleModule,
      providers: [{ provide: DRIZZLE_OPTIONS, useValue: options }, DrizzleSlotBinder],
    };
  }
}
