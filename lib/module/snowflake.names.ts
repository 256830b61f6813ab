import { Inject } from '@nestjs/common';
import { SnowflakeConfigError } from '../core/errors.js';
import { IdService } from './id.service.js';
import { DEFAULT_GENERATOR_NAME } from './snowflake.tokens.js';

/** A name that reads well in tokens, logs and messages: letters, digits, `-`, `_`, `.` and `:`, at most 64. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * The registration name `forRoot({ name })` was given, checked: the injection token is made from it when the module is
 * declared, before any options factory runs, so a bad name fails right there.
 *
 * @internal
 */
export function registrationName(name: unknown): string {
  if (name === undefined) return DEFAULT_GENERATOR_NAME;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new SnowflakeConfigError(
      'name',
      `expected a registration name such as 'orders' (letters, digits, '-', '_', '.', ':'; at most 64), got ` +
        `${JSON.stringify(name) ?? `a ${typeof name}`}. Leave it out for the default registration.`,
    );
  }
  return name;
}

/**
 * The injection token of a registration's `IdService`: the `IdService` class for the default one (so that
 * `constructor(ids: IdService)` keeps injecting it), a namespaced string for a named one.
 *
 * @example
 * moduleRef.get(getIdServiceToken('orders'))
 * { provide: OrdersRepository, useFactory: (ids: IdService) => new OrdersRepository(ids), inject: [getIdServiceToken('orders')] }
 *
 * @publicApi
 */
export function getIdServiceToken(name?: string): typeof IdService | string {
  const checked = registrationName(name);
  return checked === DEFAULT_GENERATOR_NAME ? IdService : `nestjs-snowflake:${checked}:IdService`;
}

/**
 * Injects the `IdService` of the registration named `name` (`SnowflakeModule.forRoot({ name, … })`); without a
 * name, the default one, as injecting by class does.
 *
 * @example
 * constructor(@InjectIdService('orders') private readonly orderIds: IdService) {}
 *
 * @publicApi
 */
export function InjectIdService(name?: string): PropertyDecorator & ParameterDecorator {
  return Inject(getIdServiceToken(name));
}

/**
 * A `generator` option of an integration (the GraphQL scalar, `@IsSnowflakeId()`, the ID pipe), checked when it is
 * declared: undefined for the default registration, else a registration name. Whether the app registers that name
 * is checked later, once the app's registrations exist.
 *
 * @internal
 */
export function generatorOption(generator: unknown, owner: string): string | undefined {
  if (generator === undefined) return undefined;
  if (typeof generator !== 'string' || !NAME.test(generator)) {
    throw new SnowflakeConfigError(
      'generator',
      `${owner} expected the name of a SnowflakeModule registration, such as 'orders' (the name given to ` +
        `SnowflakeModule.forRoot({ name })), got ${JSON.stringify(generator) ?? `a ${typeof generator}`}. Leave it ` +
        'out for the default registration.',
    );
  }
  return generator;
}
