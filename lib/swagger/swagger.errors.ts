import { SnowflakeError } from '../core/errors.js';

/**
 * `@ApiSnowflakeId()` on a handler parameter that is not a named route parameter, query value or header (a whole
 * `@Query()` object, a custom decorator), so the document cannot say which parameter is the ID. Thrown when the
 * document is built, naming the handler.
 *
 * @publicApi
 */
export class ApiSnowflakeIdPlacementError extends SnowflakeError {
  constructor(
    /** `Controller.method`, and the parameter's position. */
    readonly where: string,
    reason: string,
  ) {
    super(
      `@ApiSnowflakeId() on ${where}: ${reason} Put it on a parameter read with @Param('name'), @Query('name'), ` +
        "@Headers('name'), @SnowflakeIdParam('name') or @SnowflakeIdQuery('name'), on the DTO's property for a whole @Query() or @Body(), or give `name` and `in`.",
    );
  }
}
