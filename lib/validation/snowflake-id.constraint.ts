import { Injectable, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { SnowflakeConfigError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { IdService } from '../module/id.service.js';
import { findIdService } from '../module/snowflake.registry.js';
import { DEFAULT_GENERATOR_NAME } from '../module/snowflake.tokens.js';
import { idProblem } from './id-reading.js';
import { readMetadata } from './to-snowflake-id.metadata.js';
import { SnowflakeValidationSetupError } from './validation.errors.js';

/** What `@IsSnowflakeId()` hands its constraint, as class-validator's `constraints[0]`. @internal */
export interface SnowflakeIdConstraintArgs {
  form?: SnowflakeIdForm;
  /** The registration's name; undefined for the default one. */
  generator?: string;
  each: boolean;
}

/**
 * The check behind `@IsSnowflakeId()`: the value is an ID of the app's layout. class-validator asks its container
 * for this class on every validation; with `useContainer(app.select(AppModule), …)` and `SnowflakeValidationModule`
 * imported, Nest builds it and the layout is that of the app's own `IdService`. Built without Nest (no container),
 * it falls back to the `IdService` running in the process.
 *
 * @publicApi
 */
@Injectable()
@ValidatorConstraint({ name: 'isSnowflakeId', async: false })
export class SnowflakeIdConstraint implements ValidatorConstraintInterface {
  /** The services found in the container, by registration name. */
  private readonly ids = new Map<string, IdService>();

  constructor(@Optional() private readonly moduleRef?: ModuleRef) {}

  validate(value: unknown, args: ValidationArguments): boolean {
    if (notACollection(args)) return false;
    return this.problem(value, args) === undefined;
  }

  /** The field's name and the reason, as `ParseSnowflakeIdPipe` words it; each element of an array is named. */
  defaultMessage(args: ValidationArguments): string {
    const { each } = argsOf(args);
    const value: unknown = args.value;
    if (notACollection(args))
      return `${args.property}: expected an array of snowflake IDs, got ${value === null ? 'null' : 'a single value'}.`;
    if (each && Array.isArray(value)) {
      for (const [index, element] of value.entries()) {
        const problem = this.problem(element, args);
        if (problem !== undefined) return `${args.property}[${index}]: ${problem}`;
      }
    }
    return `${args.property}: ${this.problem(value, args) ?? 'expected a snowflake ID.'}`;
  }

  private problem(value: unknown, args: ValidationArguments): string | undefined {
    const transformed = readMetadata(args.object, args.property);
    // A field @ToSnowflakeId() has read holds an ID already (a bigint, or its decimal string); what it could not
    // read is reported in the form it was read with.
    const form =
      transformed === undefined ? argsOf(args).form : typeof value === 'string' ? undefined : transformed.form;
    return idProblem(value, form, this.service(argsOf(args).generator));
  }

  private service(generator: string | undefined): IdService {
    const name = generator ?? DEFAULT_GENERATOR_NAME;
    const cached = this.ids.get(name);
    if (cached !== undefined) return cached;
    if (this.moduleRef !== undefined) {
      const found = findIdService(this.moduleRef, generator, '@IsSnowflakeId()');
      if (found === undefined) {
        throw new SnowflakeValidationSetupError('SnowflakeModule is not registered in this app.');
      }
      this.ids.set(name, found);
      return found;
    }
    try {
      // Not cached: without the container this instance serves whichever app validates next.
      return IdService.current(generator);
    } catch (error) {
      if (error instanceof SnowflakeConfigError) {
        throw new SnowflakeValidationSetupError(error.message.replace(/^Invalid snowflake option `[^`]*`: /, ''));
      }
      throw error;
    }
  }
}

/**
 * With `each`, class-validator checks a single value as if it were the only element: the field would then hold an ID
 * where the DTO declares a list of them.
 */
function notACollection(args: ValidationArguments): boolean {
  if (!argsOf(args).each) return false;
  const value: unknown = args.value;
  try {
    return !Array.isArray(value) && !(value instanceof Set) && !(value instanceof Map);
  } catch {
    // A revoked Proxy throws on every question: it is no list of IDs.
    return true;
  }
}

function argsOf(args: ValidationArguments): SnowflakeIdConstraintArgs {
  return args.constraints[0] as SnowflakeIdConstraintArgs;
}
