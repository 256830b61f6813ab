import { SnowflakeError } from './errors.js';

/**
 * Something asked for a generator by a name the app does not register (`@GeneratedId({ generator })`, the health
 * indicator's or the ID pipe's `generator` option). Thrown at bootstrap where it can be, naming who asked and the
 * names the app does register.
 *
 * @publicApi
 */
export class UnknownGeneratorError extends SnowflakeError {
  constructor(
    /** The name asked for. */
    readonly generator: string,
    /** The names the app registers (`'default'` for the registration without a name). */
    readonly registered: readonly string[],
    /** Who asked, for the message: `@GeneratedId() on Order.id`, `ParseSnowflakeIdPipe`. */
    where: string,
  ) {
    super(
      `${where} takes IDs from the SnowflakeModule registration ${JSON.stringify(generator)}, which the app does ` +
        `not have: it registers ${registered.length === 0 ? 'none' : registered.map((n) => JSON.stringify(n)).join(', ')}. ` +
        (generator === 'default'
          ? 'Register SnowflakeModule.forRoot({ … }) without a name, or name one of these as the generator.'
          : `Register SnowflakeModule.forRoot({ name: ${JSON.stringify(generator)}, … }), or correct the name.`),
    );
  }
}
