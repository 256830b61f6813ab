/**
 * `@IsSnowflakeId({ generator })` in an app with two registrations of different layouts, over HTTP on a real app:
 * each field is checked against its own registration's layout, through Nest's container and without it; a name the
 * app does not register fails the validation (500) with an UnknownGeneratorError listing the names it does.
 */
import 'reflect-metadata';
import {
  Body,
  Controller,
  Module,
  Post,
  ValidationPipe,
  type INestApplication,
  type LoggerService,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IsOptional, useContainer } from 'class-validator';
import type { Server } from 'node:http';
import request from 'supertest';
import { getIdServiceToken, IdService, SnowflakeModule } from '../../lib/index.js';
import { IsSnowflakeId, SnowflakeValidationModule, ToSnowflakeId } from '../../lib/validation.js';

class CreateShipment {
  @IsSnowflakeId({ generator: 'orders' }) @ToSnowflakeId() orderId!: bigint;
  @IsSnowflakeId() @ToSnowflakeId() customerId!: bigint;
  @IsOptional() @IsSnowflakeId({ generator: 'orders', each: true }) @ToSnowflakeId({ each: true }) related?: bigint[];
}

class CreateInvoice {
  @IsSnowflakeId({ generator: 'invoices' }) @ToSnowflakeId() invoiceId!: bigint;
}

@Controller()
class ShipmentsController {
  @Post('shipments')
  create(@Body() shipment: CreateShipment) {
    return { orderId: String(shipment.orderId), customerId: String(shipment.customerId) };
  }

  @Post('invoices')
  invoice(@Body() invoice: CreateInvoice) {
    return { invoiceId: String(invoice.invoiceId) };
  }
}

class RecordingLogger implements LoggerService {
  readonly errors: string[] = [];
  log() {}
  warn() {}
  debug() {}
  verbose() {}
  error(message: unknown, ...rest: unknown[]) {
    this.errors.push([message, ...rest].map((part) => (part instanceof Error ? part.message : String(part))).join(' '));
  }
}

async function startApp(withValidationModule: boolean, logger: LoggerService): Promise<INestApplication> {
  @Module({
    imports: [
      SnowflakeModule.forRoot({ workerId: 1 }),
      SnowflakeModule.forRoot({ name: 'orders', workerId: 2, layout: 'js-safe' }),
      ...(withValidationModule ? [SnowflakeValidationModule] : []),
    ],
    controllers: [ShipmentsController],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger });
  app.useGlobalPipes(new ValidationPipe({ transform: true, whitelist: true }));
  useContainer(app.select(AppModule), { fallbackOnErrors: true });
  await app.init();
  return app;
}

describe.each([
  ["through Nest's container (SnowflakeValidationModule)", true],
  ['without the container (the running IdServices)', false],
])('@IsSnowflakeId({ generator }) %s', (_how, withValidationModule) => {
  let app: INestApplication;
  let server: Server;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    app = await startApp(withValidationModule, logger);
    server = app.getHttpServer() as Server;
  });
  afterAll(() => app.close());

  it("takes each field's IDs in its own registration's layout", async () => {
    const order = app.get<IdService>(getIdServiceToken('orders')).nextString();
    const customer = app.get(IdService).nextString();
    expect(BigInt(customer)).toBeGreaterThan(2n ** 53n);
    await request(server)
      .post('/shipments')
      .send({ orderId: order, customerId: customer })
      .expect(201, { orderId: order, customerId: customer });
  });

  it('refuses an ID of the 63-bit space in a field of the 53-bit one, naming the field and each element', async () => {
    const customer = app.get(IdService).nextString();
    const { body } = await request(server)
      .post('/shipments')
      .send({ orderId: customer, customerId: customer, related: ['1', customer] })
      .expect(400);
    expect(body.message).toEqual([
      expect.stringMatching(/^orderId: Invalid snowflake ID .*wider than the layout's 53 bits/),
      expect.stringMatching(/^related\[1\]: Invalid snowflake ID .*wider than the layout's 53 bits/),
    ]);
  });

  it('answers 500 for a name no registration has, and logs what to register', async () => {
    logger.errors.length = 0;
    await request(server).post('/invoices').send({ invoiceId: '1' }).expect(500);
    expect(logger.errors.join('\n')).toMatch(
      withValidationModule
        ? /@IsSnowflakeId\(\) takes IDs from the SnowflakeModule registration "invoices", which the app does not have: it registers "default", "orders"/
        : /no IdService named "invoices" has started in this process.*running: "default", "orders"/,
    );
  });
});

describe('@IsSnowflakeId({ generator }) declared', () => {
  it('refuses a malformed name where the DTO is declared', () => {
    expect(() => IsSnowflakeId({ generator: 'two words' })).toThrow(
      /`generator`: @IsSnowflakeId\(\) expected the name of a SnowflakeModule registration/,
    );
    expect(() => IsSnowflakeId({ generater: 'orders' } as never)).toThrow(/did you mean `generator`\?/);
  });
});
