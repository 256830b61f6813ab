import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { UnknownGeneratorError } from '../../core/generator-name.errors.js';
import type { IdIssuers } from '../typeorm/generated-id.issuers.js';
import { IdServiceNotFoundError } from '../typeorm/generated-id.errors.js';
import { SnowflakeIdSlot } from './drizzle-id.slot.js';

/** Options of `SnowflakeDrizzleModule.forRoot`. @publicApi */
export interface SnowflakeDrizzleOptions {
  /** The slots of the app's tables; each is bound to the `IdService` of its `generator`. */
  ids: SnowflakeIdSlot | readonly SnowflakeIdSlot[];
}

/** Injection token of the {@link SnowflakeDrizzleOptions}. @internal */
export const DRIZZLE_OPTIONS = 'SNOWFLAKE:DRIZZLE_OPTIONS';

/**
 * Injection token of the function that finds the app's issuers by name when the binder runs. The entry that declares
 * the module provides it, so that nothing here depends on the Nest module that owns `IdService`.
 *
 * @internal
 */
export const DRIZZLE_ID_ISSUERS = 'SNOWFLAKE:DRIZZLE_ID_ISSUERS';

/** Binds the slots when the module initialises, and unbinds them at shutdown. @internal */
@Injectable()
export class DrizzleSlotBinder implements OnModuleInit, OnApplicationShutdown {
  private readonly unbinders: Array<() => void> = [];

  constructor(
    @Inject(DRIZZLE_OPTIONS) private readonly options: SnowflakeDrizzleOptions,
    @Inject(DRIZZLE_ID_ISSUERS) private readonly findIssuers: () => IdIssuers | undefined,
  ) {}

  /**
   * @throws IdServiceNotFoundError the app registers no SnowflakeModule
   * @throws UnknownGeneratorError a slot names a generator the app does not register
   */
  onModuleInit(): void {
    const issuers = this.findIssuers();
    if (issuers === undefined || issuers.names().length === 0) {
      throw new IdServiceNotFoundError('SnowflakeDrizzleModule');
    }
    const { ids: given } = this.options;
    const slots: readonly SnowflakeIdSlot[] = given instanceof SnowflakeIdSlot ? [given] : given;
    for (const slot of slots) {
      const ids = issuers.get(slot.generator);
      if (ids === undefined) {
        throw new UnknownGeneratorError(slot.generator, issuers.names(), 'a Drizzle ID slot (snowflakeIdSlot)');
      }
      this.unbinders.push(slot.bind(ids));
    }
  }

  onApplicationShutdown(): void {
    for (const unbind of this.unbinders.splice(0)) unbind();
  }
}
