import { HttpStatus, Inject, Injectable, Optional, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { HttpErrorByCode, type ErrorHttpStatusCode } from '@nestjs/common/utils/http-error-by-code.util.js';
import { describeInput, kindOf } from '../core/describe-input.js';
import { InvalidSnowflakeError, SnowflakeConfigError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { checkIdForm } from '../core/id-form.check.js';
import { booleanOption, rejectUnknownKeys } from '../core/option-checks.js';
import { IdService } from '../module/id.service.js';
import { generatorOption } from '../module/snowflake.names.js';

/**
 * Options of {@link ParseSnowflakeIdPipe}, those of Nest's `ParseIntPipe`.
 *
 * @publicApi
 */
export interface ParseSnowflakeIdPipeOptions {
  /** Let an absent value (`undefined` or `null`) through as it is, for optional query values. @default false */
  optional?: boolean;
  /** The status of the answer to a malformed ID. @default 400 */
  errorHttpStatusCode?: ErrorHttpStatusCode;
  /** Builds the exception thrown for a malformed ID from the message (which names the parameter and the reason). */
  exceptionFactory?: (error: string) => unknown;
  /**
   * For an instance (`new …`): the name of the registration whose layout IDs follow,
   * `SnowflakeModule.forRoot({ name })`. @default the default registration
   */
  generator?: string;
  /**
   * The text form values are read in (`base32Form()`, a public-ID form, …) before the layout is checked. With a form,
   * only a string in it is read: a number (or any other value) is refused, so that a raw ID never skips an opaque form.
   * @default decimal digits, a safe-integer number or a bigint
   */
  form?: SnowflakeIdForm;
}

const PIPE_OPTION_KEYS = [
  'optional',
  'errorHttpStatusCode',
  'exceptionFactory',
  'generator',
  'form',
] as const satisfies readonly (keyof ParseSnowflakeIdPipeOptions)[];

/**
 * Parses a route parameter, query value or body field into an ID (a bigint) of the app's layout:
 * `@Param('id', ParseSnowflakeIdPipe) id: bigint`, or with options
 * `@Query('after', new ParseSnowflakeIdPipe({ optional: true })) after?: bigint`. Malformed input (not digits,
 * negative, wider than the layout) answers 400 with the reason, like Nest's `ParseIntPipe`, instead of reaching the
 * handler or failing with a 500. As a class it gets `IdService` from the module; as an instance (`new …`) it reads
 * the layout from the running app's `IdService` at each value.
 *
 * @publicApi
 */
@Injectable()
export class ParseSnowflakeIdPipe implements PipeTransform<unknown, bigint | null | undefined> {
  private readonly options: ParseSnowflakeIdPipeOptions;
  /** The module's, when Nest builds the pipe; an instance (`new …`) asks for the running app's at each value. */
  private readonly ids: IdService | undefined;

  // The token is named: a union type is recorded as `Object`, which Nest would look for in vain, leaving the class form
  // to the process-wide lookup that cannot choose between apps of different layouts.
  constructor(@Optional() @Inject(IdService) idsOrOptions?: IdService | ParseSnowflakeIdPipeOptions) {
    if (idsOrOptions instanceof IdService) {
      this.ids = idsOrOptions;
      this.options = {};
    } else {
      this.options = checkPipeOptions(idsOrOptions);
    }
  }

  transform(value: unknown, metadata: ArgumentMetadata): bigint | null | undefined {
    if ((value === undefined || value === null) && this.options.optional === true) return value;
    try {
      const { form } = this.options;
      if (form === undefined) return this.service().decode(value as bigint | string | number).id;
      if (typeof value !== 'string') {
        throw new InvalidSnowflakeError(value, `expected the ${form.name} text of an ID, got ${kindOf(value)}.`);
      }
      return this.service().decode(form.parse(value)).id;
    } catch (error) {
      if (!(error instanceof InvalidSnowflakeError)) throw error;
      const message = metadata.data ? `${metadata.data}: ${error.message}` : error.message;
      if (this.options.exceptionFactory !== undefined) throw this.options.exceptionFactory(message);
      const status = this.options.errorHttpStatusCode ?? HttpStatus.BAD_REQUEST;
      const Exception = HttpErrorByCode[status];
      throw new Exception(
        { statusCode: status, error: httpPhrase(status), message, type: error.name },
        { cause: error },
      );
    }
  }

  private service(): IdService {
    // Not cached for an instance: built once with the controller class, it serves whichever app runs now (apps of
    // other layouts may follow one another in one process, as in tests).
    return this.ids ?? IdService.current(this.options.generator);
  }
}

/**
 * Checks an instance's options where it is declared (the pipe is built with the controller class): a misspelt key or
 * a malformed `generator` fails the bootstrap naming it, rather than leaving its default in force.
 */
function checkPipeOptions(options: ParseSnowflakeIdPipeOptions | undefined): ParseSnowflakeIdPipeOptions {
  if (options === undefined || options === null) return {};
  rejectUnknownKeys('', options, PIPE_OPTION_KEYS, 'ParseSnowflakeIdPipe');
  generatorOption(options.generator, 'ParseSnowflakeIdPipe');
  checkIdForm(options.form, 'ParseSnowflakeIdPipe');
  booleanOption('optional', options.optional, false);
  const status = options.errorHttpStatusCode;
  if (status !== undefined && HttpErrorByCode[status] === undefined) {
    throw new SnowflakeConfigError(
      'errorHttpStatusCode',
      `ParseSnowflakeIdPipe answers with one of Nest's HTTP errors (${Object.keys(HttpErrorByCode).join(', ')}), ` +
        `got ${describeInput(status)}. Use exceptionFactory for any other response.`,
    );
  }
  if (options.exceptionFactory !== undefined && typeof options.exceptionFactory !== 'function') {
    throw new SnowflakeConfigError(
      'exceptionFactory',
      `ParseSnowflakeIdPipe expected a function (message) => error, got ${describeInput(options.exceptionFactory)}.`,
    );
  }
  return options;
}

function httpPhrase(status: number): string {
  const name = HttpStatus[status] ?? 'Bad Request';
  return name
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
