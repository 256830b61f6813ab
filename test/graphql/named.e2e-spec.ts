/**
 * Named generators over GraphQL, on real Apollo (Express) and Mercurius (Fastify) servers: the `Snowflake` scalar
 * bound to the default registration beside an `OrderId` scalar (defineSnowflakeScalar) bound to a registration of
 * another layout, and `SnowflakeGraphQLModule.forRoot({ generator })` binding `Snowflake` itself to a named one.
 * Names the app does not register fail the bootstrap, listing the ones it does.
 */
import 'reflect-metadata';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Inject, Module, type INestApplication, type LoggerService } from '@nestjs/common';
import { Args, Field, GraphQLModule, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test, type TestingModule } from '@nestjs/testing';
import request from 'supertest';
import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { SnowflakeGraphQLModule } from '../../lib/graphql/snowflake-graphql.module.js';
import { defineSnowflakeScalar, SnowflakeScalar } from '../../lib/graphql/snowflake.scalar.js';
import { IdService } from '../../lib/module/id.service.js';
import { UnknownGeneratorError } from '../../lib/core/generator-name.errors.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import { getIdServiceToken } from '../../lib/module/snowflake.names.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/** Orders take IDs of the js-safe layout (53 bits); everything else the default 63-bit one. */
const OrderIdScalar = defineSnowflakeScalar('OrderId', { generator: 'orders' });

@ObjectType()
class Order {
  @Field(() => OrderIdScalar)
  id!: bigint;

  @Field(() => SnowflakeScalar)
  customerId!: bigint;
}

/** What the resolvers received, to prove arguments arrived as bigints. */
const received: unknown[] = [];

@Resolver(() => Order)
class OrderResolver {
  constructor(
    private readonly ids: IdService,
    @Inject(getIdServiceToken('orders')) private readonly orderIds: IdService,
  ) {}

  @Query(() => Order)
  newOrder(): Order {
    return { id: this.orderIds.next(), customerId: this.ids.next() };
  }

  @Query(() => Order)
  order(
    @Args('id', { type: () => OrderIdScalar }) id: bigint,
    @Args('customerId', { type: () => SnowflakeScalar }) customerId: bigint,
  ): Order {
    received.push(id, customerId);
    return { id, customerId };
  }
}

type DriverName = 'apollo' | 'mercurius';

function graphqlModule(driver: DriverName) {
  return driver === 'apollo'
    ? GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true })
    : GraphQLModule.forRoot<MercuriusDriverConfig>({ driver: MercuriusDriver, autoSchemaFile: true });
}

async function createApp(driver: DriverName, imports: unknown[], providers: unknown[]): Promise<INestApplication> {
  @Module({ imports: imports as never[], providers: providers as never[] })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(quiet)
    .compile();
  const app =
    driver === 'apollo'
      ? moduleRef.createNestApplication({ logger: quiet })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger: quiet });
  await app.listen(0, '127.0.0.1');
  return app;
}

interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

async function gql(url: string, query: string, variables?: Record<string, unknown>): Promise<GraphQLResponse> {
  const response = await request(url).post('/graphql').send({ query, variables });
  return response.body as GraphQLResponse;
}

const registrations = () => [
  SnowflakeModule.forRoot({ workerId: 1 }),
  SnowflakeModule.forRoot({ name: 'orders', workerId: 2, layout: 'js-safe' }),
];

describe.each<DriverName>(['apollo', 'mercurius'])('two ID spaces, two scalars, on %s', (driver) => {
  let app: INestApplication;
  let url: string;
  let ids: IdService;
  let orderIds: IdService;

  beforeAll(async () => {
    app = await createApp(
      driver,
      [...registrations(), SnowflakeGraphQLModule, graphqlModule(driver)],
      [OrderResolver, OrderIdScalar],
    );
    url = await app.getUrl();
    ids = app.get(IdService);
    orderIds = app.get<IdService>(getIdServiceToken('orders'));
  });
  afterAll(() => app.close());

  it('declares both scalars in the schema, each described', async () => {
    const response = await gql(url, '{ __schema { types { name kind description } } }');
    const types = (response.data as { __schema: { types: { name: string; kind: string; description: string }[] } })
      .__schema.types;
    const scalars = types.filter((type) => type.name === 'Snowflake' || type.name === 'OrderId');
    expect(scalars.map((type) => [type.name, type.kind]).sort()).toEqual([
      ['OrderId', 'SCALAR'],
      ['Snowflake', 'SCALAR'],
    ]);
    expect(scalars.every((type) => type.description.startsWith('A snowflake ID'))).toBe(true);
  });

  it("serialises each registration's IDs, issued by its own worker", async () => {
    const response = await gql(url, '{ newOrder { id customerId } }');
    expect(response.errors).toBeUndefined();
    const { id, customerId } = (response.data as { newOrder: { id: string; customerId: string } }).newOrder;
    expect(orderIds.decode(id).workerId).toBe(2);
    expect(ids.decode(customerId).workerId).toBe(1);
  });

  it("reads arguments in each scalar's layout, as bigints", async () => {
    const order = orderIds.next();
    const customer = ids.next();
    expect(customer).toBeGreaterThan(2n ** 53n);
    received.length = 0;
    const response = await gql(
      url,
      'query ($id: OrderId!, $customerId: Snowflake!) { order(id: $id, customerId: $customerId) { id customerId } }',
      { id: String(order), customerId: String(customer) },
    );
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({ order: { id: String(order), customerId: String(customer) } });
    expect(received).toEqual([order, customer]);
  });

  it("refuses an ID of the 63-bit space as an OrderId, naming the layout's width", async () => {
    const customer = ids.next();
    received.length = 0;
    const response = await gql(url, 'query ($id: OrderId!) { order(id: $id, customerId: "1") { id } }', {
      id: String(customer),
    });
    expect(response.data ?? null).toBeNull();
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0].message).toMatch(/OrderId.*wider than the layout's 53 bits/s);
    expect(received).toEqual([]);
  });
});

describe('SnowflakeGraphQLModule.forRoot({ generator })', () => {
  it('binds the Snowflake scalar to the named registration', async () => {
    @Resolver()
    class EchoResolver {
      @Query(() => SnowflakeScalar)
      echo(@Args('id', { type: () => SnowflakeScalar }) id: bigint): bigint {
        return id;
      }
    }
    const app = await createApp(
      'apollo',
      [...registrations(), SnowflakeGraphQLModule.forRoot({ generator: 'orders' }), graphqlModule('apollo')],
      [EchoResolver],
    );
    try {
      const url = await app.getUrl();
      const order = app.get<IdService>(getIdServiceToken('orders')).nextString();
      expect(await gql(url, 'query ($id: Snowflake!) { echo(id: $id) }', { id: order })).toEqual({
        data: { echo: order },
      });
      const wide = app.get(IdService).nextString();
      const refused = await gql(url, 'query ($id: Snowflake!) { echo(id: $id) }', { id: wide });
      expect(refused.errors?.[0].message).toMatch(/wider than the layout's 53 bits/);
    } finally {
      await app.close();
    }
  });
});

describe('names the app does not register', () => {
  async function bootstrapFailure(imports: unknown[], providers: unknown[] = []): Promise<unknown> {
    @Module({ imports: imports as never[], providers: providers as never[] })
    class AppModule {}
    // Options fail while the module is built (compile), lookups once it initialises (init).
    let moduleRef: TestingModule | undefined;
    try {
      moduleRef = await Test.createTestingModule({ imports: [AppModule] })
        .setLogger(quiet)
        .compile();
      await moduleRef.init();
    } catch (error) {
      return error;
    } finally {
      await moduleRef?.close();
    }
    throw new Error('expected the bootstrap to fail');
  }

  it('fail the bootstrap for SnowflakeGraphQLModule.forRoot({ generator }), listing the registered names', async () => {
    const error = await bootstrapFailure([
      ...registrations(),
      SnowflakeGraphQLModule.forRoot({ generator: 'invoices' }),
    ]);
    expect(error).toBeInstanceOf(UnknownGeneratorError);
    expect((error as Error).message).toMatch(
      /^The GraphQL scalar Snowflake takes IDs from the SnowflakeModule registration "invoices", which the app does not have: it registers "default", "orders"\./,
    );
  });

  it('fail the bootstrap for a scalar of defineSnowflakeScalar()', async () => {
    const InvoiceIdScalar = defineSnowflakeScalar('InvoiceId', { generator: 'invoices' });
    const error = await bootstrapFailure(registrations(), [InvoiceIdScalar]);
    expect(error).toBeInstanceOf(UnknownGeneratorError);
    expect((error as UnknownGeneratorError).registered).toEqual(['default', 'orders']);
    expect((error as Error).message).toContain('The GraphQL scalar InvoiceId');
  });

  it('fail the bootstrap without any registration, saying what to import', async () => {
    const error = await bootstrapFailure([SnowflakeGraphQLModule.forRoot({ generator: 'orders' })]);
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as Error).message).toMatch(/Snowflake scalar found no IdService.*import SnowflakeModule\.forRoot/);
  });

  it('refuse malformed names and unknown options where they are declared', () => {
    expect(() => defineSnowflakeScalar('Order Id', { generator: 'orders' })).toThrow(/`name`.*GraphQL type name/);
    expect(() => defineSnowflakeScalar('__OrderId')).toThrow(/`name`/);
    expect(() => defineSnowflakeScalar('OrderId', { generator: 'or ders' })).toThrow(
      /`generator`.*name of a SnowflakeModule registration/,
    );
    expect(() => defineSnowflakeScalar('OrderId', { generater: 'orders' } as never)).toThrow(
      /has no option "generater"; did you mean `generator`\?/,
    );
  });

  it('refuse a misspelt option of SnowflakeGraphQLModule.forRoot() at bootstrap', async () => {
    const error = await bootstrapFailure([
      SnowflakeModule.forRoot({ workerId: 1 }),
      SnowflakeGraphQLModule.forRoot({ generater: 'orders' } as never),
    ]);
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as Error).message).toMatch(/did you mean `generator`\?/);
  });
});

describe('an IdService the app provides by hand, beside a named registration', () => {
  it('is the default the Snowflake scalar follows', async () => {
    const handBuilt = new IdService({ workerId: 5, layout: 'js-safe' });
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ name: 'orders', workerId: 2 }), SnowflakeGraphQLModule],
      providers: [{ provide: IdService, useValue: handBuilt }],
    })
      .setLogger(quiet)
      .compile();
    try {
      await moduleRef.init();
      const scalar = moduleRef.get(SnowflakeScalar);
      expect(scalar.parseValue('42')).toBe(42n);
      expect(() => scalar.parseValue(String(2n ** 60n))).toThrow(/wider than the layout's 53 bits/);
    } finally {
      await moduleRef.close();
    }
  });
});
