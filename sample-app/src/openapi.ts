import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

/**
 * The OpenAPI document, served at /docs (and /docs-json). IDs are documented with @ApiSnowflakeId() as decimal
 * strings, as the app sends them, so a client generated from it never rounds one.
 */
export function setUpOpenApi(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('nestjs-snowflake sample')
    .setDescription('Snowflake IDs are 64-bit integers written as decimal strings.')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document);
  return document;
}
