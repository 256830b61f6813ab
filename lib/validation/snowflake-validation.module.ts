import { Module } from '@nestjs/common';
import { SnowflakeIdConstraint } from './snowflake-id.constraint.js';

/**
 * Registers the constraint behind `@IsSnowflakeId()` in Nest's container, so that with class-validator's
 * `useContainer(app.select(AppModule), { fallbackOnErrors: true })` the check follows the layout of this app's
 * `IdService` (found wherever `SnowflakeModule` is registered, global or not).
 *
 * @publicApi
 */
@Module({ providers: [SnowflakeIdConstraint], exports: [SnowflakeIdConstraint] })
export class SnowflakeValidationModule {}
