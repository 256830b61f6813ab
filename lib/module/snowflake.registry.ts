import { Injectable, Module } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { IdService } from './id.service.js';
import { UnknownGeneratorError } from '../core/generator-name.errors.js';
import { DuplicateGeneratorNameError } from './snowflake.errors.js';
import { DEFAULT_GENERATOR_NAME } from './snowflake.tokens.js';

/**
 * The `SnowflakeModule` registrations of one app, by name: what the integrations (TypeORM, health) look generators up
 * in, and what refuses a name given twice. One per app, not per process, so two apps in one process (tests) may
 * both register "orders".
 *
 * The default name may be registered more than once, as before names existed (feature modules importing
 * `forRoot()` each with a worker ID of its own): lookups of it take the first registration built.
 *
 * @internal
 */
@Injectable()
export class SnowflakeRegistry {
  private readonly reserved = new Set<string>();
  private readonly services: IdService[] = [];

  /** Claims `name` for a registration being built, before it claims a worker ID. @throws DuplicateGeneratorNameError */
  reserve(name: string): void {
    if (name !== DEFAULT_GENERATOR_NAME && this.reserved.has(name)) throw new DuplicateGeneratorNameError(name);
    this.reserved.add(name);
  }

  /** Records a registration's built service under its name. */
  add(service: IdService): void {
    this.services.push(service);
  }

  /** The service registered under `name` (the first one for the default name); undefined when none is. */
  get(name: string = DEFAULT_GENERATOR_NAME): IdService | undefined {
    return this.services.find((service) => service.name === name);
  }

  /**
   * The names registered, each once, sorted: the order in which registrations finish building depends on their
   * worker sources (a lock on disk, a Redis claim), so messages that list them must not.
   */
  names(): string[] {
    return [...new Set(this.services.map((service) => service.name))].sort();
  }
}

/**
 * Holds the app's {@link SnowflakeRegistry}. Every registration imports it; Nest builds a static module once per app,
 * so they all share one registry.
 *
 * @internal
 */
@Module({ providers: [SnowflakeRegistry], exports: [SnowflakeRegistry] })
export class SnowflakeRegistryModule {}

/** The app's registry, from any module; undefined when the app registers no SnowflakeModule. @internal */
export function findRegistry(moduleRef: Pick<ModuleRef, 'get'>): SnowflakeRegistry | undefined {
  try {
    return moduleRef.get(SnowflakeRegistry, { strict: false });
  } catch {
    return undefined;
  }
}

/**
 * The `IdService` of the registration named `generator` (the default one without a name) in the app of `moduleRef`,
 * looked up across modules. An app without registrations may still provide an `IdService` of its own by class (built
 * by hand): that one stands for the default. Undefined when there is none, a case each caller words for itself.
 *
 * @throws UnknownGeneratorError the app registers generators, but none of that name; `where` names who asked
 * @internal
 */
export function findIdService(
  moduleRef: Pick<ModuleRef, 'get'>,
  generator: string | undefined,
  where: string,
): IdService | undefined {
  const isDefault = generator === undefined || generator === DEFAULT_GENERATOR_NAME;
  const registry = findRegistry(moduleRef);
  // An IdService the app provides by class (built by hand) stands for the default, beside named registrations too.
  const found = registry?.get(generator) ?? (isDefault ? providedByClass(moduleRef) : undefined);
  const names = registry?.names() ?? [];
  if (found === undefined && names.length > 0) {
    throw new UnknownGeneratorError(generator ?? DEFAULT_GENERATOR_NAME, names, where);
  }
  return found;
}

function providedByClass(moduleRef: Pick<ModuleRef, 'get'>): IdService | undefined {
  try {
    return moduleRef.get<IdService>(IdService, { strict: false });
  } catch {
    return undefined;
  }
}
