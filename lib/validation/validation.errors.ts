import { SnowflakeError } from '../core/errors.js';

/**
 * `@IsSnowflakeId()` found no `IdService` to read the layout from: class-validator built its constraint without
 * Nest's container, and no app with `SnowflakeModule` runs in this process (or several with different layouts do).
 * Thrown when a value is validated, so the request answers 500 and the log says what to set up.
 *
 * @publicApi
 */
export class SnowflakeValidationSetupError extends SnowflakeError {
  constructor(cause: string) {
    super(
      `@IsSnowflakeId() cannot find the app's IdService: ${cause} Import SnowflakeValidationModule in the app ` +
        "module beside SnowflakeModule.forRoot(), and let class-validator use Nest's container: " +
        "`useContainer(app.select(AppModule), { fallbackOnErrors: true })` from 'class-validator', right after " +
        'NestFactory.create().',
    );
  }
}
