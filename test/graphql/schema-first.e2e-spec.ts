import 'reflect-metadata';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Module, type DynamicModule, type INestApplication } from '@nestjs/common';
import { Args, GraphQLModule, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { GraphQLScalarType } from 'graphql';
import request from 'supertest';
import { InvalidSnowflakeError, WorkerUnavailableError } from '../../lib/core/errors.js';
import type { SnowflakeIdForm } from '../../lib/core/id-form.js';
import { formatSnowflakeGraphQLError } from '../../lib/graphql/snowflake-graphql.errors.js';
import { SnowflakeGraphQLModule } from '../../lib/graphql/snowflake-graphql.module.js';
import { createSnowflakeScalar } from '../../lib/graphql/snowflake-scalar.type.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';

/**
 * Schema-first apps (`scalar Snowflake` in the type definitions) on real Apollo and Mercurius servers: the scalar
 * registered by SnowflakeGraphQLModule, or by hand with createSnowflakeScalar() in `resolvers`, in the decimal form
 * and in a text form of the app's own; and Apollo's formatError helper for errors no filter caught.
 */

const typeDefs = /* GraphQL */ `
  scalar Snowflake

  type Owner {
    id: Snowflake!
  }

  type Item {
    id: Snowflake!
    argumentType: String!
    owner: Owner!
  }

  type Query {
    item(id: Snowflake!): Item!
    items(ids: [Snowflake!]!): [Item!]!
  }

  type Mutation {
    fail(kind: String!): Snowflake
  }
`;

/** A tiny text form of the test's own: `x` and hexadecimal digits. */
const hexForm: SnowflakeIdForm = {
  name: 'hex',
  format: (id) => `x${id.toString(16)}`,
  parse: (text) => {
    if (!/^x[0-9a-f]{1,16}$/.test(text)) throw new InvalidSnowflakeError(text, "expected 'x' and hexadecimal digits.");
    return BigInt(`0x${text.slice(1)}`);
  },
};

const received: unknown[] = [];
let ownerId: bigint;

interface ItemSource {
  id: bigint;
  argumentType: string;
}

@Resolver('Item')
class ItemResolver {
  constructor(private readonly ids: IdService) {}

  @Query('item')
  item(@Args('id') id: bigint): ItemSource {
    received.push(id);
    return { id, argumentType: typeof id };
  }

  @Query('items')
  items(@Args('ids') ids: bigint[]): ItemSource[] {
    received.push(...ids);
    return ids.map((id) => ({ id, argumentType: typeof id }));
  }

  @ResolveField('owner')
  owner(@Parent() _item: ItemSource): { id: bigint } {
    return { id: ownerId };
  }

  @Mutation('fail')
  fail(@Args('kind') kind: string): bigint {
    if (kind === 'fenced') throw new WorkerUnavailableError('fenced', 'lease at 10.1.2.3:6379 lapsed');
    return this.ids.decode('12ab').id;
  }
}

type DriverName = 'apollo' | 'mercurius';
type Registration = 'SnowflakeGraphQLModule' | 'createSnowflakeScalar';

function graphqlModule(driver: DriverName, registration: Registration, form?: SnowflakeIdForm): DynamicModule {
  // By hand, the layout comes from IdService, which the factory injects; the module's scalar finds it by itself.
  const resolvers = (ids: IdService): Record<string, GraphQLScalarType> =>
    registration === 'createSnowflakeScalar' ? { Snowflake: createSnowflakeScalar(ids.layout, { form }) } : {};
  return driver === 'apollo'
    ? GraphQLModule.forRootAsync<ApolloDriverConfig>({
        driver: ApolloDriver,
        inject: [IdService],
        useFactory: (ids: IdService) => ({
          typeDefs,
          resolvers: resolvers(ids),
          formatError: formatSnowflakeGraphQLError,
        }),
      })
    : GraphQLModule.forRootAsync<MercuriusDriverConfig>({
        driver: MercuriusDriver,
        inject: [IdService],
        useFactory: (ids: IdService) => ({ typeDefs, resolvers: resolvers(ids) }),
      });
}

async function createApp(driver: DriverName, registration: Registration, form?: SnowflakeIdForm) {
  const imports =
    registration === 'SnowflakeGraphQLModule'
      ? [form === undefined ? SnowflakeGraphQLModule : SnowflakeGraphQLModule.forRoot({ form })]
      : [];
  @Module({
    imports: [
      SnowflakeModule.forRoot({ workerId: 9, isGlobal: true }),
      ...imports,
      graphqlModule(driver, registration, form),
    ],
    providers: [ItemResolver],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app: INestApplication =
    driver === 'apollo'
      ? moduleRef.createNestApplication({ logger: false })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

interface GraphQLBody {
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
}

const cases = (['apollo', 'mercurius'] as const).flatMap((driver) =>
  (['SnowflakeGraphQLModule', 'createSnowflakeScalar'] as const).map((registration) => [driver, registration] as const),
);

describe.each(cases)('scalar Snowflake, schema first, on %s, registered by %s', (driver, registration) => {
  describe.each([
    ['the decimal form', undefined],
    ['a form of its own', hexForm],
  ] as const)('in %s', (_formName, form) => {
    let app: INestApplication;
    let url: string;
    let ids: IdService;
    const text = (id: bigint) => (form === undefined ? id.toString() : form.format(id));

    async function gql(query: string, variables?: Record<string, unknown>): Promise<GraphQLBody> {
      const response = await request(url).post('/graphql').send({ query, variables });
      return response.body as GraphQLBody;
    }

    beforeAll(async () => {
      app = await createApp(driver, registration, form);
      url = await app.getUrl();
      ids = app.get(IdService);
      ownerId = ids.next();
    });
    afterAll(() => app.close());

    it('reads an ID argument inline and as a variable into a bigint, and writes IDs of nested resolvers back', async () => {
      const [a, b] = ids.nextBatch(2);
      const inline = await gql(`{ item(id: "${text(a)}") { id argumentType owner { id } } }`);
      expect(inline).toEqual({ data: { item: { id: text(a), argumentType: 'bigint', owner: { id: text(ownerId) } } } });
      expect(received.at(-1)).toBe(a);
      const variables = await gql('query($ids: [Snowflake!]!) { items(ids: $ids) { id } }', {
        ids: [text(a), text(b)],
      });
      expect(variables).toEqual({ data: { items: [{ id: text(a) }, { id: text(b) }] } });
      expect(received.slice(-2)).toEqual([a, b]);
    });

    it('refuses a malformed ID with the reason, inline and as a variable', async () => {
      const before = received.length;
      const reason = form === undefined ? 'digits only' : "expected 'x' and hexadecimal digits";
      for (const response of [
        await gql('{ item(id: "12ab!") { id } }'),
        await gql('query($id: Snowflake!) { item(id: $id) { id } }', { id: '12ab!' }),
      ]) {
        expect(response.data ?? null).toBeNull();
        expect(response.errors).toHaveLength(1);
        expect(response.errors![0].message).toContain(reason);
      }
      expect(received.length).toBe(before);
    });

    it(form === undefined ? 'takes a safe integer' : 'takes only strings of the form, never a number', async () => {
      const small = ids.compose({ timestamp: ids.layout.epoch + 5, workerId: 1 });
      const response = await gql('query($id: Snowflake!) { item(id: $id) { argumentType } }', { id: Number(small) });
      if (form === undefined) {
        expect(response).toEqual({ data: { item: { argumentType: 'bigint' } } });
      } else {
        expect(response.errors![0].message).toContain('expected a string in the hex form, got number');
      }
    });

    it('checks what the form reads against the layout', async () => {
      const tooWide = 2n ** 63n;
      const response = await gql(`{ item(id: "${form === undefined ? tooWide : hexForm.format(tooWide)}") { id } }`);
      expect(response.errors![0].message).toContain("wider than the layout's 63 bits");
    });
  });
});

describe("formatSnowflakeGraphQLError as Apollo's formatError, with no exception filter", () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    app = await createApp('apollo', 'SnowflakeGraphQLModule');
    url = await app.getUrl();
  });
  afterAll(() => app.close());

  const post = async (query: string) => (await request(url).post('/graphql').send({ query })).body as GraphQLBody;

  it('maps a transient error to SERVICE_UNAVAILABLE, withholding its message and stack trace', async () => {
    const response = await post('mutation { fail(kind: "fenced") }');
    expect(response.errors).toEqual([
      {
        message: 'No ID can be issued right now; retry in 1 s.',
        locations: expect.any(Array),
        path: ['fail'],
        extensions: { code: 'SERVICE_UNAVAILABLE', type: 'WorkerUnavailableError', retryAfterSeconds: 1 },
      },
    ]);
    expect(JSON.stringify(response)).not.toContain('10.1.2.3');
  });

  it('maps InvalidSnowflakeError from a resolver to BAD_USER_INPUT, with the reason', async () => {
    const response = await post('mutation { fail(kind: "invalid") }');
    expect(response.errors![0]).toMatchObject({
      message: expect.stringContaining('Invalid snowflake ID "12ab"'),
      extensions: { code: 'BAD_USER_INPUT', type: 'InvalidSnowflakeError' },
    });
  });

  it("keeps Apollo's code for an ID written in the query, a validation error, and names the error class", async () => {
    const response = await post('{ item(id: "-1") { id } }');
    expect(response.errors![0]).toMatchObject({
      message: expect.stringMatching(/^Expected value of type "Snowflake!?", found "-1"; Invalid snowflake ID "-1"/),
      extensions: { code: 'GRAPHQL_VALIDATION_FAILED', type: 'InvalidSnowflakeError' },
    });
  });
});
