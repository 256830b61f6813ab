import { SnowflakeConfigError, SnowflakeError } from '../core/errors.js';

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

/**
 * Two `SnowflakeModule` registrations of one app were given the same name. Their `IdService`s would share an
 * injection token, so which one a class gets would depend on import order. Thrown at bootstrap, before either claims
 * a worker ID.
 *
 * @publicApi
 */
export class DuplicateGeneratorNameError extends SnowflakeConfigError {
  constructor(readonly generator: string) {
    super(
      'name',
      `two SnowflakeModule registrations of this app are named ${JSON.stringify(generator)}. Give each registration a ` +
        'name of its own; to use one generator in several modules, register it once with `isGlobal: true` (or in ' +
        'a module that exports it) and inject it with @InjectIdService(' +
        `${JSON.stringify(generator)}) wherever it is needed.`,
    );
  }
}
