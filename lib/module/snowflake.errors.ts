import { SnowflakeConfigError } from '../core/errors.js';

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
