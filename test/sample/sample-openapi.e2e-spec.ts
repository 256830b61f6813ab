import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import openapiTS, { astToString } from 'openapi-typescript';
import { IdService } from 'nestjs-snowflake';
import { SNOWFLAKE_ID_SCHEMA } from 'nestjs-snowflake/swagger';
import { setUpOpenApi } from '../../sample-app/src/openapi.js';
import { settledSharedNamespace } from '../support/shared-redis.js';
import { http, startSampleApp, tempDirectory } from './sample-app.harness.js';

/** The sample's OpenAPI document (what /docs shows) documents every ID as the app sends it: a decimal string. */
describe('the sample app’s OpenAPI document', () => {
  let app: INestApplication;
  let document: OpenAPIObject;
  const dir = tempDirectory();

  beforeAll(async () => {
    const { url, namespace } = await settledSharedNamespace('sample-openapi');
    app = await startSampleApp({
      REDIS_URL: url,
      DATABASE_URL: `file:${dir.path('openapi.sqlite')}`,
      SNOWFLAKE_NAMESPACE: namespace,
      SNOWFLAKE_LEASE_TTL_MS: '3000',
    });
    document = setUpOpenApi(app);
  });
  afterAll(async () => {
    await app?.close();
    dir.remove();
  });

  const idSchema = { type: 'string', format: 'int64', pattern: SNOWFLAKE_ID_SCHEMA.pattern };
  const schemaOf = (path: string, method: 'get' | 'post', name: string) =>
    document.paths[path][method]!.parameters!.find((parameter) => 'name' in parameter && parameter.name === name);

  it('documents the ID parameters and the ID fields of responses and bodies as decimal strings', () => {
    expect(schemaOf('/ids/{id}', 'get', 'id')).toMatchObject({ in: 'path', schema: idSchema });
    expect(schemaOf('/users/{id}', 'get', 'id')).toMatchObject({ in: 'path', schema: idSchema });
    expect(schemaOf('/users/{id}/orders', 'post', 'id')).toMatchObject({ in: 'path', schema: idSchema });
    expect(schemaOf('/notes', 'get', 'subject')).toMatchObject({ in: 'query', required: false, schema: idSchema });
    const schemas = document.components!.schemas! as Record<string, { properties: Record<string, object> }>;
    expect(schemas.SnowflakePartsView.properties.id).toMatchObject(idSchema);
    expect(schemas.User.properties.id).toMatchObject(idSchema);
    expect(schemas.Order.properties.id).toMatchObject(idSchema);
    expect(schemas.AuditNoteView.properties.subjectId).toMatchObject({ ...idSchema, nullable: true });
    expect(schemas.CreateNoteBody.properties.subjectId).toMatchObject(idSchema);
  });

  it('documents order references by the pattern of their form, with an example and no int64 hint', async () => {
    const reference = {
      type: 'string',
      pattern: '^ord_[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{12}$',
      example: 'ord_1tzcmnsbw0400',
    };
    const parameter = schemaOf('/orders/{ref}', 'get', 'ref') as unknown as {
      in: string;
      schema: Record<string, unknown>;
    };
    expect(parameter).toMatchObject({ in: 'path', required: true, schema: reference });
    expect(parameter.schema.format).toBeUndefined();
    const order = (document.components!.schemas! as Record<string, { properties: Record<string, object> }>).Order;
    expect(order.properties.reference).toMatchObject(reference);
    expect(order.properties.reference).not.toHaveProperty('format');
    const ok = document.paths['/orders/{ref}'].get!.responses['200'] as { content: Record<string, unknown> };
    expect(ok.content['application/json']).toEqual({ schema: { $ref: '#/components/schemas/Order' } });

    const types = astToString(await openapiTS(document as never)).replace(/\/\*\*[\s\S]*?\*\//g, '');
    expect(/\bOrder: \{([^}]*)\}/.exec(types)?.[1]).toMatch(/^\s*reference: string;$/m);
    expect(types).toMatch(/OrdersController_findByReference: \{\s*parameters: \{[^]*?path: \{\s*ref: string;\s*\};/);

    // What the app sends matches the documented pattern.
    const user = await http(app)
      .post('/users')
      .send({ email: 'ref@example.com', name: 'Ref', orders: [{ item: 'cup', quantity: 1 }] })
      .expect(201);
    expect(user.body.orders[0].reference).toMatch(new RegExp(reference.pattern));
  });

  it('gives a generated client string IDs, and the app answers with strings the schema accepts', async () => {
    const types = astToString(await openapiTS(document as never)).replace(/\/\*\*[\s\S]*?\*\//g, '');
    const user = /\bUser: \{([^}]*)\}/.exec(types)?.[1] ?? '';
    expect(user).toMatch(/^\s*id: string;$/m);
    expect(/\bSnowflakePartsView: \{([^}]*)\}/.exec(types)?.[1]).toMatch(/^\s*id: string;$/m);

    const id = String(await app.get(IdService).nextAsync());
    const { body } = await http(app).get(`/ids/${id}`).expect(200);
    expect(body.id).toBe(id);
    expect(body.id).toMatch(new RegExp(SNOWFLAKE_ID_SCHEMA.pattern));
  });
});
