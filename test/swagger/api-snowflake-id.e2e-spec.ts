import 'reflect-metadata';
import { Body, Controller, Get, Headers, Module, Param, Post, Query, type INestApplication } from '@nestjs/common';
import { ApiOkResponse, ApiProperty, DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import type { Server } from 'node:http';
import openapiTS, { astToString } from 'openapi-typescript';
import request from 'supertest';
import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import {
  BigIntSerializerInterceptor,
  IdService,
  ParseSnowflakeIdPipe,
  SnowflakeIdParam,
  SnowflakeIdQuery,
  SnowflakeModule,
  base32Form,
} from '../../lib/index.js';
import {
  ApiSnowflakeId,
  ApiSnowflakeIdPlacementError,
  SNOWFLAKE_ID_SCHEMA,
  type DocumentedIdForm,
} from '../../lib/swagger.js';

/** A text form of the test's own, base 36, that states its pattern. */
const base36: DocumentedIdForm = {
  name: 'base36',
  pattern: /^[0-9a-z]{1,13}$/,
  format: (id) => id.toString(36),
  parse: (text) => {
    if (!/^[0-9a-z]{1,13}$/.test(text)) throw new InvalidSnowflakeError(text, 'expected base-36 digits.');
    return [...text].reduce((id, digit) => id * 36n + BigInt(parseInt(digit, 36)), 0n);
  },
};

/** A form of the library's: base32 with a type prefix, which states its own pattern. */
const orderRef = base32Form({ prefix: 'ord' });

class OrderView {
  @ApiSnowflakeId() id!: bigint;
  @ApiSnowflakeId({ description: 'The buyer' }) userId!: bigint;
  @ApiSnowflakeId({ required: false, nullable: true }) couponId?: bigint | null;
  @ApiSnowflakeId() itemIds!: bigint[];
  @ApiSnowflakeId({ form: base36 }) publicRef!: string;
  @ApiSnowflakeId({ form: orderRef }) reference!: string;
  /** Left as @nestjs/swagger documents a bigint, to show what the decorator changes. */
  @ApiProperty() total!: bigint;
}

class OrderSearch {
  @ApiSnowflakeId({ required: false }) ownerId?: bigint;
}

@Controller('orders')
class OrdersController {
  constructor(private readonly ids: IdService) {}

  @Get(':id')
  @ApiOkResponse({ type: OrderView })
  find(@Param('id', ParseSnowflakeIdPipe) @ApiSnowflakeId() id: bigint): OrderView {
    return {
      id,
      userId: this.ids.next(),
      couponId: null,
      itemIds: [this.ids.next()],
      publicRef: 'z',
      reference: orderRef.format(id),
      total: 3n,
    };
  }

  // The decorator on the left of @Query: the two apply in the other order, which must not matter.
  @Get()
  list(
    @ApiSnowflakeId({ required: false }) @Query('after', new ParseSnowflakeIdPipe({ optional: true })) after?: bigint,
    @Headers('x-tenant-id') @ApiSnowflakeId({ description: 'The tenant' }) tenant?: string,
    @Query('ids') @ApiSnowflakeId({ isArray: true, required: false }) ids?: string[],
  ): string[] {
    return [String(after), String(tenant), String(ids)];
  }

  @Get('newest/id')
  @ApiOkResponse({ schema: SNOWFLAKE_ID_SCHEMA })
  newest(): string {
    return this.ids.nextString();
  }

  @Get('search/all')
  search(@Query() query: OrderSearch): string {
    return String(query.ownerId);
  }

  @Get('by-ref/:ref')
  @ApiSnowflakeId({ name: 'ref', in: 'path', form: base36 })
  byRef(@Param('ref') ref: string): string {
    return ref;
  }

  // The library's own parameter decorators, which Nest records as custom ones: they say what they read.
  @Get('by-reference/:ref')
  byReference(
    @SnowflakeIdParam('ref', { form: orderRef }) @ApiSnowflakeId({ form: orderRef }) id: bigint,
    @ApiSnowflakeId({ required: false }) @SnowflakeIdQuery('since', { optional: true }) since?: bigint,
  ) {
    return { id, since: since ?? null };
  }

  @Post()
  create(@Body() order: OrderView): string {
    return String(order.userId);
  }
}

@Module({ imports: [SnowflakeModule.forRoot({ workerId: 3 })], controllers: [OrdersController] })
class AppModule {}

type Schema = Record<string, unknown>;
type Parameter = { name: string; in: string; required?: boolean; schema: Schema; description?: string };

describe('@ApiSnowflakeId() in the OpenAPI document of a running app', () => {
  let app: INestApplication;
  let document: OpenAPIObject;
  let served: OpenAPIObject;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalInterceptors(new BigIntSerializerInterceptor());
    document = SwaggerModule.createDocument(app, new DocumentBuilder().setTitle('orders').build());
    SwaggerModule.setup('docs', app, document);
    await app.init();
    served = (
      await request(app.getHttpServer() as Server)
        .get('/docs-json')
        .expect(200)
    ).body as OpenAPIObject;
  });
  afterAll(() => app.close());

  const parameters = (path: string, method: 'get' | 'post') =>
    (served.paths[path][method]!.parameters ?? []) as Parameter[];
  const properties = (model: string) => served.components!.schemas![model] as { properties: Record<string, Schema> };
  const idSchema = {
    type: 'string',
    format: 'int64',
    pattern: '^0*[0-9]{1,19}$',
    example: SNOWFLAKE_ID_SCHEMA.example,
  };

  it('documents DTO properties as decimal strings: plain, described, optional and nullable, and arrays', () => {
    const { properties: props, required } = served.components!.schemas!.OrderView as {
      properties: Record<string, Schema>;
      required: string[];
    };
    expect(props.id).toMatchObject(idSchema);
    expect(props.userId).toMatchObject({ ...idSchema, description: 'The buyer' });
    expect(props.couponId).toMatchObject({ ...idSchema, nullable: true });
    expect(props.itemIds).toMatchObject({ type: 'array', items: idSchema });
    expect(required).toEqual(expect.arrayContaining(['id', 'userId', 'itemIds', 'publicRef']));
    expect(required).not.toContain('couponId');
    // What the decorator replaces: a bigint as @nestjs/swagger documents it.
    expect(props.total).toMatchObject({ type: 'integer', format: 'int64' });
  });

  it('documents a path parameter, a query value and a header, whichever side of Nest’s decorator it stands', () => {
    expect(parameters('/orders/{id}', 'get')).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true, schema: expect.objectContaining(idSchema) }),
    ]);
    const list = parameters('/orders', 'get');
    expect(list).toHaveLength(3);
    expect(list).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'after',
          in: 'query',
          required: false,
          schema: expect.objectContaining(idSchema),
        }),
        expect.objectContaining({
          name: 'x-tenant-id',
          in: 'header',
          required: true,
          description: 'The tenant',
          schema: expect.objectContaining(idSchema),
        }),
        expect.objectContaining({
          name: 'ids',
          in: 'query',
          required: false,
          schema: { type: 'array', items: idSchema },
        }),
      ]),
    );
  });

  it('gives the schema constant to what takes a schema: a response of one bare ID', () => {
    const content = (served.paths['/orders/newest/id'].get!.responses['200'] as { content: Record<string, unknown> })
      .content;
    expect(content['application/json']).toEqual({ schema: { ...SNOWFLAKE_ID_SCHEMA } });
  });

  it('documents the properties of a whole @Query() object', () => {
    expect(parameters('/orders/search/all', 'get')).toEqual([
      expect.objectContaining({
        name: 'ownerId',
        in: 'query',
        required: false,
        schema: expect.objectContaining(idSchema),
      }),
    ]);
  });

  it('describes a text form by its pattern and an example the form wrote, without the int64 hint', () => {
    const form = {
      type: 'string',
      pattern: '^[0-9a-z]{1,13}$',
      example: BigInt(SNOWFLAKE_ID_SCHEMA.example).toString(36),
    };
    expect(properties('OrderView').properties.publicRef).toEqual({
      ...form,
      description: 'A snowflake ID in its base36 form.',
    });
    expect(properties('OrderView').properties.publicRef.format).toBeUndefined();
    expect(parameters('/orders/by-ref/{ref}', 'get')).toEqual([
      expect.objectContaining({ name: 'ref', in: 'path', required: true, schema: form }),
    ]);
  });

  it('documents a form of the library by the pattern it states, its example and no int64 hint', async () => {
    const schema = {
      type: 'string',
      pattern: '^ord_[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{12}$',
      example: orderRef.format(BigInt(SNOWFLAKE_ID_SCHEMA.example)),
    };
    expect(schema.example).toBe('ord_1tzcmnsbw0400');
    expect(properties('OrderView').properties.reference).toEqual({
      ...schema,
      description: 'A snowflake ID in its base32 form.',
    });
    const byReference = parameters('/orders/by-reference/{ref}', 'get');
    expect(byReference).toHaveLength(2);
    expect(byReference).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'ref', in: 'path', required: true, schema }),
        expect.objectContaining({
          name: 'since',
          in: 'query',
          required: false,
          schema: expect.objectContaining(idSchema),
        }),
      ]),
    );
    // What the app sends and reads matches the documented pattern; a text it refuses need not.
    const id = app.get(IdService).next();
    const { body } = await request(app.getHttpServer() as Server)
      .get(`/orders/${id}`)
      .expect(200);
    expect(body.reference).toMatch(new RegExp(schema.pattern));
    await request(app.getHttpServer() as Server)
      .get(`/orders/by-reference/${String(body.reference).toUpperCase().replace('ORD_', 'ord_')}`)
      .expect(200, { id: String(id), since: null });
  });

  it('matches what the app sends: every ID of a response is a string the documented pattern accepts', async () => {
    const id = app.get(IdService).nextString();
    const { body } = await request(app.getHttpServer() as Server)
      .get(`/orders/${id}`)
      .expect(200);
    const pattern = new RegExp(idSchema.pattern);
    for (const value of [body.id, body.userId, ...body.itemIds]) {
      expect(typeof value).toBe('string');
      expect(value).toMatch(pattern);
    }
    expect(body.id).toBe(id);
  });

  it('gives clients generated by openapi-typescript string IDs, and leaves the undecorated bigint a number', async () => {
    // The generated declarations, without their doc comments (which repeat the descriptions and examples).
    const types = astToString(await openapiTS(document as never)).replace(/\/\*\*[\s\S]*?\*\//g, '');
    const orderView = /OrderView: \{([^}]*)\}/.exec(types)?.[1] ?? '';
    expect(orderView).toMatch(/^\s*id: string;$/m);
    expect(orderView).toMatch(/^\s*userId: string;$/m);
    expect(orderView).toMatch(/^\s*couponId\?: string \| null;$/m);
    expect(orderView).toMatch(/^\s*itemIds: string\[\];$/m);
    expect(orderView).toMatch(/^\s*publicRef: string;$/m);
    expect(orderView).toMatch(/^\s*reference: string;$/m);
    expect(orderView).toMatch(/^\s*total: number;$/m);
    expect(types).toMatch(/path: \{\s*id: string;\s*\};/);
    expect(types).toMatch(/OrdersController_byReference: \{\s*parameters: \{[^]*?path: \{\s*ref: string;\s*\};/);
    expect(types).toMatch(/query\?: \{\s*after\?: string;\s*ids\?: string\[\];\s*\};/);
    expect(types).toMatch(/header: \{\s*"x-tenant-id": string;\s*\};/);
    expect(types).toMatch(/query\?: \{\s*ownerId\?: string;\s*\};/);
    expect(types).toMatch(/OrdersController_newest: \{[\s\S]*?"application\/json": string;/);
  });
});

describe('@ApiSnowflakeId() misplaced', () => {
  it('names the handler when the parameter is a whole @Query() object', async () => {
    @Controller('bad')
    class BadController {
      @Get()
      list(@Query() @ApiSnowflakeId() query: OrderSearch): string {
        return String(query.ownerId);
      }
    }
    @Module({ controllers: [BadController] })
    class BadModule {}
    const moduleRef = await Test.createTestingModule({ imports: [BadModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      expect(() => SwaggerModule.createDocument(app, new DocumentBuilder().build())).toThrow(
        ApiSnowflakeIdPlacementError,
      );
      expect(() => SwaggerModule.createDocument(app, new DocumentBuilder().build())).toThrow(
        /^@ApiSnowflakeId\(\) on BadController\.list \(parameter 0\): the parameter reads the whole query object/,
      );
    } finally {
      await app.close();
    }
  });

  it('refuses unknown options and a handler without a name, at once', () => {
    expect(() => ApiSnowflakeId({ requird: false } as never)).toThrow(/did you mean `required`\?/);
    expect(() => ApiSnowflakeId({ in: 'body' } as never)).toThrow(/'path', 'query' or 'header'/);
    class Handlers {
      handle(): void {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Handlers.prototype, 'handle')!;
    expect(() => ApiSnowflakeId()(Handlers.prototype, 'handle', descriptor)).toThrow(/needs `name` and `in`/);
  });

  // Found by a review: these went into the document as given (a `required: 'false'`, an `isArray: 'yes'` that
  // documented a list, a number example in a string schema), or failed as a TypeError.
  it('refuses options of the wrong kind where it is applied, naming the option', () => {
    expect(() => ApiSnowflakeId({ required: 'false' } as never)).toThrow(/`required`: expected true or false/);
    expect(() => ApiSnowflakeId({ nullable: 1 } as never)).toThrow(/`nullable`: expected true or false/);
    expect(() => ApiSnowflakeId({ isArray: 'yes' } as never)).toThrow(/`isArray`: expected true or false/);
    expect(() => ApiSnowflakeId({ example: 42 } as never)).toThrow(/`example`: @ApiSnowflakeId\(\) expected a string/);
    expect(() => ApiSnowflakeId({ form: base32Form } as never)).toThrow(
      /`form`: @ApiSnowflakeId\(\) expected a SnowflakeIdForm/,
    );
    expect(() => ApiSnowflakeId({ form: base32Form(), required: false, example: '1' })).not.toThrow();
  });
});
