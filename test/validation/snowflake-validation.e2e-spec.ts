import 'reflect-metadata';
import {
  Body,
  Controller,
  Get,
  Module,
  Post,
  Query,
  ValidationPipe,
  type INestApplication,
  type ValidationPipeOptions,
} from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { Type } from 'class-transformer';
import { IsOptional, IsString, useContainer, validate, ValidateNested } from 'class-validator';
import type { Server } from 'node:http';
import request from 'supertest';
import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import type { SnowflakeIdForm } from '../../lib/core/id-form.js';
import { IdService, SnowflakeModule, type SnowflakeModuleOptions } from '../../lib/index.js';
import {
  IsSnowflakeId,
  SnowflakeValidationModule,
  SnowflakeValidationSetupError,
  ToSnowflakeId,
} from '../../lib/validation.js';

/** A text form of the test's own: base 36. */
const base36: SnowflakeIdForm = {
  name: 'base36',
  format: (id) => id.toString(36),
  parse: (text) => {
    if (!/^[0-9a-z]{1,13}$/.test(text)) throw new InvalidSnowflakeError(text, 'expected 1 to 13 base-36 digits.');
    return [...text].reduce((id, digit) => id * 36n + BigInt(parseInt(digit, 36)), 0n);
  },
};

class CreateOrder {
  @IsSnowflakeId() @ToSnowflakeId() userId!: bigint;
  @IsOptional() @IsSnowflakeId() @ToSnowflakeId() couponId?: bigint;
  @IsSnowflakeId({ each: true }) @ToSnowflakeId({ each: true }) itemIds!: bigint[];
  @IsOptional() @IsSnowflakeId() @ToSnowflakeId({ to: 'string' }) refId?: string;
  @IsOptional() @IsSnowflakeId() @ToSnowflakeId({ form: base36 }) shortRef?: bigint;
  @IsOptional() @IsSnowflakeId({ form: base36 }) keptRef?: string;
  @IsOptional() @IsSnowflakeId() plainRef?: string;
  @IsString() note!: string;
}

class OrderLine {
  @IsSnowflakeId() @ToSnowflakeId() productId!: bigint;
}

class CreateInvoice {
  @ValidateNested({ each: true }) @Type(() => OrderLine) lines!: OrderLine[];
}

class ListOrders {
  @IsOptional() @IsSnowflakeId() @ToSnowflakeId() after?: bigint;
}

/** What the handler received: each field's type and value, since JSON cannot show a bigint. */
function received(body: object): Record<string, [string, string]> {
  return Object.fromEntries(
    Object.entries(body)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, [Array.isArray(value) ? `${typeof value[0]}[]` : typeof value, String(value)]]),
  );
}

@Controller('orders')
class OrdersController {
  @Post()
  create(@Body() order: CreateOrder) {
    return { isDto: order instanceof CreateOrder, fields: received(order) };
  }

  @Post('invoices')
  invoice(@Body() invoice: CreateInvoice) {
    return invoice.lines.map((line) => received(line));
  }

  @Get()
  list(@Query() query: ListOrders) {
    return received(query);
  }
}

type Adapter = 'express' | 'fastify';

async function startApp(
  snowflake: SnowflakeModuleOptions,
  withValidationModule: boolean,
  adapter: Adapter = 'express',
  pipe: ValidationPipeOptions = { transform: true, whitelist: true },
): Promise<INestApplication> {
  @Module({
    imports: [SnowflakeModule.forRoot(snowflake), ...(withValidationModule ? [SnowflakeValidationModule] : [])],
    controllers: [OrdersController],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app =
    adapter === 'express'
      ? moduleRef.createNestApplication({ logger: false })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  app.useGlobalPipes(new ValidationPipe(pipe));
  useContainer(app.select(AppModule), { fallbackOnErrors: true });
  await app.init();
  if (adapter === 'fastify') await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  return app;
}

const BEYOND_2_53 = '9007199254740993'; // 2^53 + 1: exact as text, rounded to 2^53 as a JSON number
const WIDER_THAN_63_BITS = (2n ** 63n).toString();

describe.each<Adapter>(['express', 'fastify'])(
  '@IsSnowflakeId() and @ToSnowflakeId() under a global ValidationPipe({ transform: true, whitelist: true }) on %s',
  (adapter) => {
    let app: INestApplication;
    const post = (body: string | object) =>
      request(app.getHttpServer() as Server)
        .post('/orders')
        .set('content-type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
    const messages = async (body: string | object) => {
      const response = await post(body).expect(400);
      expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      return response.body.message as string[];
    };

    beforeAll(async () => {
      app = await startApp({ workerId: 1 }, true, adapter);
    });
    afterAll(() => app.close());

    it('hands the handler bigints (exact beyond 2^53), a decimal string, a form read to a bigint, and drops unknown fields', async () => {
      const { body } = await post({
        userId: BEYOND_2_53,
        couponId: 42,
        itemIds: ['1', '9223372036854775807'],
        refId: '007',
        shortRef: 'zz',
        keptRef: 'abc',
        note: 'gift',
        extra: 'dropped by whitelist',
      }).expect(201);
      expect(body).toEqual({
        isDto: true,
        fields: {
          userId: ['bigint', BEYOND_2_53],
          couponId: ['bigint', '42'],
          itemIds: ['bigint[]', '1,9223372036854775807'],
          refId: ['string', '7'],
          shortRef: ['bigint', String(36n * 35n + 35n)],
          keptRef: ['string', 'abc'],
          note: ['string', 'gift'],
        },
      });
    });

    it('lets absent optional fields through as absent', async () => {
      const { body } = await post({ userId: '5', itemIds: [], note: '' }).expect(201);
      expect(body.fields).toEqual({ userId: ['bigint', '5'], itemIds: ['undefined[]', ''], note: ['string', ''] });
    });

    it('answers 400 naming the field and the reason for malformed text', async () => {
      expect(await messages({ userId: '12ab', itemIds: [], note: '' })).toEqual([
        'userId: Invalid snowflake ID "12ab": expected a non-negative decimal integer (digits only).',
      ]);
      expect(await messages({ userId: '-1', itemIds: [], note: '' })).toEqual([
        'userId: Invalid snowflake ID "-1": expected a non-negative decimal integer (digits only).',
      ]);
    });

    it('reads zero-padded decimals as decode(), the pipe and the scalar do, whatever their length', async () => {
      const padded = `${'0'.repeat(1000)}12`;
      const response = await post({ userId: padded, itemIds: ['007'], note: '' }).expect(201);
      expect(response.body.fields).toMatchObject({ userId: ['bigint', '12'], itemIds: ['bigint[]', '7'] });
    });

    it('answers 400 for a single ID where each: true declares a list', async () => {
      expect(await messages({ userId: '1', itemIds: '2', note: '' })).toEqual([
        'itemIds: expected an array of snowflake IDs, got a single value.',
      ]);
    });

    it('names a long or large input without repeating it', async () => {
      const [long] = await messages({ userId: `${'9'.repeat(50_000)}x`, itemIds: [], note: '' });
      expect(long.length).toBeLessThan(300);
      const [array] = await messages({ userId: Array.from({ length: 20_000 }, () => 1), itemIds: [], note: '' });
      expect(array.length).toBeLessThan(300);
    });

    it('answers 400 for a JSON number beyond 2^53, which arrived rounded', async () => {
      const [message] = await messages(`{"userId": ${BEYOND_2_53}, "itemIds": [], "note": ""}`);
      expect(message).toBe(
        'userId: Invalid snowflake ID 9007199254740992: the number lies beyond 2^53, so it was already rounded; ' +
          'pass the ID as a string or a bigint.',
      );
    });

    it('answers 400 for an ID wider than the layout, and names the element of a list', async () => {
      expect(await messages({ userId: WIDER_THAN_63_BITS, itemIds: ['1', 'x', WIDER_THAN_63_BITS], note: '' })).toEqual(
        [
          // Refused as the text it came as: no layout's ID is that wide, so the transform leaves it unread.
          `userId: Invalid snowflake ID "${WIDER_THAN_63_BITS}": wider than the layout's 63 bits (largest ID ${2n ** 63n - 1n}).`,
          'itemIds[1]: Invalid snowflake ID "x": expected a non-negative decimal integer (digits only).',
        ],
      );
    });

    it('answers 400 for a required field left out, and for a value of the wrong type', async () => {
      expect(await messages({ itemIds: [], note: '' })).toEqual([
        'userId: Invalid snowflake ID undefined: expected a bigint, a decimal string or a number, got undefined.',
      ]);
      expect(await messages({ userId: { id: 1 }, itemIds: [], note: '' })).toEqual([
        'userId: Invalid snowflake ID (an object): expected a bigint, a decimal string or a number, got object.',
      ]);
    });

    it('reads a text form with the form, and reports its reason', async () => {
      expect(await messages({ userId: '1', itemIds: [], note: '', shortRef: 'ZZ', keptRef: '12345678901234' })).toEqual(
        [
          'shortRef: Invalid snowflake ID "ZZ": expected 1 to 13 base-36 digits.',
          'keptRef: Invalid snowflake ID "12345678901234": expected 1 to 13 base-36 digits.',
        ],
      );
      // A decimal number is not the form's text: an app with an opaque form never takes raw IDs by mistake.
      expect(await messages({ userId: '1', itemIds: [], note: '', shortRef: 12 })).toEqual([
        'shortRef: Invalid snowflake ID 12: expected the base36 text of an ID, got number.',
      ]);
    });

    it('reads and checks IDs in nested DTOs, naming the path to the field', async () => {
      const server = app.getHttpServer() as Server;
      await request(server)
        .post('/orders/invoices')
        .send({ lines: [{ productId: BEYOND_2_53 }] })
        .expect(201, [{ productId: ['bigint', BEYOND_2_53] }]);
      const { body } = await request(server)
        .post('/orders/invoices')
        .send({ lines: [{ productId: '1' }, { productId: 'one' }] })
        .expect(400);
      expect(body.message).toEqual([
        'lines.1.productId: Invalid snowflake ID "one": expected a non-negative decimal integer (digits only).',
      ]);
    });

    it('validates a whole @Query() object too', async () => {
      const server = app.getHttpServer() as Server;
      await request(server).get('/orders').expect(200, {});
      await request(server)
        .get(`/orders?after=${BEYOND_2_53}`)
        .expect(200, { after: ['bigint', BEYOND_2_53] });
      const { body } = await request(server).get('/orders?after=soon').expect(400);
      expect(body.message).toEqual([
        'after: Invalid snowflake ID "soon": expected a non-negative decimal integer (digits only).',
      ]);
    });
  },
);

describe.each<Adapter>(['express', 'fastify'])(
  'with implicit conversion (ValidationPipe({ transform: true, transformOptions: { enableImplicitConversion: true } })) on %s',
  (adapter) => {
    let app: INestApplication;
    const post = (body: string) =>
      request(app.getHttpServer() as Server)
        .post('/orders')
        .set('content-type', 'application/json')
        .send(body);
    const required = '"itemIds": ["1"], "note": "x"';

    beforeAll(async () => {
      const pipe = { transform: true, whitelist: true, transformOptions: { enableImplicitConversion: true } };
      app = await startApp({ workerId: 1 }, true, adapter, pipe);
    });
    afterAll(() => app.close());

    it('refuses a JSON number rounded beyond 2^53 in a bigint field, a string field and a field kept as text', async () => {
      // class-transformer converts to the declared type before any @Transform: the rounded number would reach a
      // `string` field as the all-digit "1234567890123456800", an ID other than the one sent.
      for (const field of ['userId', 'refId', 'plainRef']) {
        const userId = field === 'userId' ? '' : '"userId": "1", ';
        const response = await post(`{ ${userId}"${field}": 1234567890123456789, ${required} }`).expect(400);
        expect(response.body.message).toEqual([expect.stringMatching(new RegExp(`^${field}: .*beyond 2\\^53`))]);
      }
      const listed = await post(`{ "userId": "1", "itemIds": ["1", 9007199254740993], "note": "x" }`).expect(400);
      expect(listed.body.message).toEqual([expect.stringMatching(/^itemIds\[1\]: .*beyond 2\^53/)]);
    });

    it('answers 400, not 500, for an object in a bigint field, and reads exact IDs as without the conversion', async () => {
      const object = await post(`{ "userId": {}, ${required} }`).expect(400);
      expect(object.body.message).toEqual([expect.stringMatching(/^userId: .*an object/)]);
      const { body } = await post(
        `{ "userId": "${BEYOND_2_53}", "couponId": 42, "refId": "007", "plainRef": "12", ${required} }`,
      ).expect(201);
      expect(body.fields).toMatchObject({
        userId: ['bigint', BEYOND_2_53],
        couponId: ['bigint', '42'],
        refId: ['string', '7'],
        plainRef: ['string', '12'],
      });
    });
  },
);

describe('the layout the check follows', () => {
  it.each([
    { layout: 'default', other: 'js-safe', status: 201, message: undefined },
    { layout: 'js-safe', other: 'default', status: 400, message: /^userId: .*wider than the layout's 53 bits/ },
  ] as const)(
    "is the app's own through Nest's container, beside an app of another layout ($layout beside $other)",
    async ({ layout, other, status, message }) => {
      const otherApp = await startApp({ workerId: 2, layout: other }, true);
      // Started last, this app's container is the one class-validator uses.
      const app = await startApp({ workerId: 1, layout }, true);
      try {
        // Two layouts run in this process: no fallback could tell which one applies.
        expect(() => IdService.current()).toThrow(/several IdServices with different layouts/);
        const { body } = await request(app.getHttpServer() as Server)
          .post('/orders')
          .send({ userId: BEYOND_2_53, itemIds: [], note: '' })
          .expect(status);
        if (message !== undefined) expect(body.message).toEqual([expect.stringMatching(message)]);
        else expect(body.fields.userId).toEqual(['bigint', BEYOND_2_53]);
      } finally {
        await app.close();
        await otherApp.close();
      }
    },
  );

  it('is that of the running IdService when the constraint is not in the container', async () => {
    const app = await startApp({ workerId: 1, layout: 'js-safe' }, false);
    try {
      const server = app.getHttpServer() as Server;
      const valid = app.get(IdService).nextString();
      await request(server)
        .get(`/orders?after=${valid}`)
        .expect(200, { after: ['bigint', valid] });
      const { body } = await request(server).get(`/orders?after=${BEYOND_2_53}`).expect(400);
      expect(body.message).toEqual([expect.stringMatching(/^after: .*wider than the layout's 53 bits/)]);
    } finally {
      await app.close();
    }
  });

  it('is nowhere without an app: validating says what to set up', async () => {
    const query = Object.assign(new ListOrders(), { after: 1n });
    // class-validator runs synchronous constraints before it returns its promise: the error is thrown, not rejected.
    expect(() => validate(query)).toThrow(SnowflakeValidationSetupError);
    expect(() => validate(query)).toThrow(
      /IdService: no IdService has started in this process.* Import SnowflakeValidationModule .*useContainer\(app\.select/,
    );
  });

  it('refuses unknown options when the class is declared', () => {
    expect(() => IsSnowflakeId({ fom: base36 } as never)).toThrow(/did you mean `form`\?/);
    expect(() => ToSnowflakeId({ to: 'number' } as never)).toThrow(/'bigint' or 'string'/);
  });
});
