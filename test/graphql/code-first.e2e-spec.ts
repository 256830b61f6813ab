import 'reflect-metadata';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Controller, Get, Module, type INestApplication, type LoggerService } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import {
  Args,
  Field,
  GraphQLModule,
  Mutation,
  ObjectType,
  Parent,
  Query,
  ResolveField,
  Resolver,
} from '@nestjs/graphql';
import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  BatchTooLargeError,
  InvalidSnowflakeError,
  SequenceExhaustedError,
  WorkerUnavailableError,
} from '../../lib/core/errors.js';
import { SnowflakeGraphQLExceptionFilter } from '../../lib/graphql/snowflake-graphql-exception.filter.js';
import { SnowflakeGraphQLModule } from '../../lib/graphql/snowflake-graphql.module.js';
import { SnowflakeScalar } from '../../lib/graphql/snowflake.scalar.js';
import { RedisUnavailableError } from '../../lib/lease/lease.errors.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';

/**
 * A code-first schema served by real Apollo (Express) and Mercurius (Fastify) servers, queried over HTTP: bigint IDs
 * out of root and nested resolvers and lists, IDs in as arguments and variables, malformed IDs refused with their
 * reason, and the library's errors mapped to codes. Every ID is above 2^53, so a number anywhere on the way would
 * show as a rounded value.
 */

@ObjectType()
class Owner {
  @Field(() => SnowflakeScalar)
  id!: bigint;

  @Field(() => [SnowflakeScalar])
  friendIds!: bigint[];
}

@ObjectType()
class Item {
  @Field(() => SnowflakeScalar)
  id!: bigint;

  @Field()
  argumentType!: string;

  /** Resolved by a field resolver, not exposed as it is. */
  ownerId!: bigint;
}

/** The arguments the resolvers received, to prove they were bigints and that refused IDs never reach one. */
const received: unknown[] = [];

/** The IDs the resolvers hand out, fixed per app once the layout is known. */
interface Fixture {
  itemIds: bigint[];
  ownerId: bigint;
  friendIds: bigint[];
}
let fixture: Fixture;

@Resolver(() => Item)
class ItemResolver {
  constructor(private readonly ids: IdService) {}

  @Query(() => [Item])
  items(): Item[] {
    return fixture.itemIds.map((id) => ({ id, argumentType: 'none', ownerId: fixture.ownerId }));
  }

  @Query(() => Item)
  item(@Args('id', { type: () => SnowflakeScalar }) id: bigint): Item {
    received.push(id);
    return { id, argumentType: typeof id, ownerId: fixture.ownerId };
  }

  @Query(() => [SnowflakeScalar])
  echo(@Args('ids', { type: () => [SnowflakeScalar] }) ids: bigint[]): bigint[] {
    received.push(...ids);
    return ids;
  }

  /** IDs as a PostgreSQL driver returns them (decimal strings), and one the server got wrong. */
  @Query(() => SnowflakeScalar)
  fromDriver(@Args('value') value: string): string {
    return value;
  }

  @Query(() => SnowflakeScalar)
  nextId(): bigint {
    return this.ids.next();
  }

  @ResolveField(() => Owner)
  owner(@Parent() item: Item): Owner {
    return { id: item.ownerId, friendIds: fixture.friendIds };
  }

  @Mutation(() => SnowflakeScalar)
  fail(@Args('kind') kind: string): bigint {
    switch (kind) {
      case 'invalid':
        return this.ids.decode('12ab').id;
      case 'fenced':
        throw new WorkerUnavailableError('fenced', 'The lease lapsed; re-claiming.');
      case 'exhausted':
        throw new SequenceExhaustedError(3, 10);
      case 'redis':
        throw new RedisUnavailableError('default', 5, 'connect ECONNREFUSED 10.1.2.3:6379');
      default:
        throw new BatchTooLargeError(1_000_000, 40_960, 10);
    }
  }
}

/** A controller beside the resolvers: the same filter answers its errors over HTTP. */
@Controller('ids')
class IdsController {
  @Get('fenced')
  fenced(): never {
    throw new WorkerUnavailableError('fenced', 'The lease lapsed; re-claiming.');
  }
}

/** Records what Nest logs, to check what reaches the log and what clients see. */
class RecordingLogger implements LoggerService {
  readonly warnings: string[] = [];
  readonly errors: string[] = [];
  log() {}
  debug() {}
  verbose() {}
  warn(message: unknown) {
    this.warnings.push(String(message));
  }
  error(message: unknown) {
    this.errors.push(message instanceof Error ? `${message.name}: ${message.message}` : String(message));
  }
}

type DriverName = 'apollo' | 'mercurius';

async function createApp(driver: DriverName, logger: LoggerService): Promise<INestApplication> {
  const graphql =
    driver === 'apollo'
      ? GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true })
      : GraphQLModule.forRoot<MercuriusDriverConfig>({ driver: MercuriusDriver, autoSchemaFile: true });
  @Module({
    imports: [SnowflakeModule.forRoot({ workerId: 7 }), SnowflakeGraphQLModule, graphql],
    controllers: [IdsController],
    providers: [ItemResolver, { provide: APP_FILTER, useClass: SnowflakeGraphQLExceptionFilter }],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
    .setLogger(logger)
    .compile();
  const app =
    driver === 'apollo'
      ? moduleRef.createNestApplication({ logger })
      : moduleRef.createNestApplication(new FastifyAdapter(), { logger });
  await app.listen(0, '127.0.0.1');
  return app;
}

interface GraphQLResponse {
  status: number;
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: string[]; extensions?: Record<string, unknown> }[];
  text: string;
}

describe.each<DriverName>(['apollo', 'mercurius'])('the Snowflake scalar, code first, on %s', (driver) => {
  let app: INestApplication;
  let url: string;
  let ids: IdService;
  const logger = new RecordingLogger();

  /** Posts a GraphQL request; `body` as text when JSON.stringify could not write it (numbers beyond 2^53). */
  async function gql(query: string, variables?: Record<string, unknown>, rawBody?: string): Promise<GraphQLResponse> {
    const response = await request(url)
      .post('/graphql')
      .set('content-type', 'application/json')
      .send(rawBody ?? JSON.stringify({ query, variables }));
    const body = response.body as Omit<GraphQLResponse, 'status' | 'text'>;
    return { status: response.status, ...body, text: response.text };
  }

  beforeAll(async () => {
    app = await createApp(driver, logger);
    url = await app.getUrl();
    ids = app.get(IdService);
    const [a, b, c, owner, f1, f2] = ids.nextBatch(6);
    fixture = { itemIds: [a, b, c], ownerId: owner, friendIds: [f1, f2] };
    expect(fixture.itemIds.every((id) => id > BigInt(Number.MAX_SAFE_INTEGER))).toBe(true);
  });
  afterAll(() => app.close());

  it('serialises bigints of root resolvers, nested @ResolveFields and lists to exact decimal strings', async () => {
    const response = await gql('{ items { id owner { id friendIds } } }');
    expect(response.errors).toBeUndefined();
    expect(response.data).toEqual({
      items: fixture.itemIds.map((id) => ({
        id: id.toString(),
        owner: { id: fixture.ownerId.toString(), friendIds: fixture.friendIds.map(String) },
      })),
    });
  });

  it('serialises an ID just issued by IdService, of the worker the app runs', async () => {
    const response = await gql('{ nextId }');
    const id = (response.data as { nextId: string }).nextId;
    expect(id).toMatch(/^\d+$/);
    expect(ids.decode(id).workerId).toBe(7);
  });

  it('serialises the decimal strings a database driver returns, and refuses a value that is no ID', async () => {
    const good = fixture.ownerId.toString();
    expect((await gql(`{ fromDriver(value: "${good}") }`)).data).toEqual({ fromDriver: good });
    const bad = await gql('{ fromDriver(value: "-1") }');
    expect(bad.data).toBeNull();
    expect(bad.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('Snowflake cannot represent the value a resolver returned'),
        path: ['fromDriver'],
      }),
    ]);
    expect(bad.errors![0].message).toContain('expected a non-negative decimal integer');
  });

  it.each([
    ['a string literal', (id: bigint) => [`{ item(id: "${id}") { id argumentType } }`]],
    [
      'a string variable',
      (id: bigint) => ['query($id: Snowflake!) { item(id: $id) { id argumentType } }', { id: `${id}` }],
    ],
  ] as const)('parses an ID given as %s into the bigint, exactly', async (_how, build) => {
    const id = fixture.itemIds[1];
    const [query, variables] = build(id) as [string, Record<string, unknown>?];
    const response = await gql(query, variables);
    expect(response.data).toEqual({ item: { id: id.toString(), argumentType: 'bigint' } });
    expect(received.at(-1)).toBe(id);
  });

  it('parses a safe integer, inline and as a variable, into a bigint', async () => {
    const small = ids.compose({ timestamp: ids.layout.epoch + 1000, workerId: 3 });
    expect(small <= BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
    const inline = await gql(`{ item(id: ${small}) { id argumentType } }`);
    expect(inline.data).toEqual({ item: { id: small.toString(), argumentType: 'bigint' } });
    const variable = await gql('query($id: Snowflake!) { item(id: $id) { argumentType } }', { id: Number(small) });
    expect(variable.data).toEqual({ item: { argumentType: 'bigint' } });
    expect(received.at(-1)).toBe(small);
  });

  it('parses a list of IDs given as a variable', async () => {
    const given = fixture.itemIds.map(String);
    const response = await gql('query($ids: [Snowflake!]!) { echo(ids: $ids) }', { ids: given });
    expect(response.data).toEqual({ echo: given });
    expect(received.slice(-3)).toEqual(fixture.itemIds);
  });

  const tooWide = (2n ** 63n).toString();
  it.each([
    ['letters, inline', '{ item(id: "12ab") { id } }', undefined, 'expected a non-negative decimal integer'],
    ['letters, as a variable', 'query($id: Snowflake!) { item(id: $id) { id } }', { id: '12ab' }, 'digits only'],
    ['a negative number, inline', '{ item(id: -5) { id } }', undefined, 'IDs are never negative'],
    [
      'a negative number, as a variable',
      'query($id: Snowflake!) { item(id: $id) { id } }',
      { id: -5 },
      'never negative',
    ],
    [
      'a fraction, as a variable',
      'query($id: Snowflake!) { item(id: $id) { id } }',
      { id: 1.5 },
      'expected an integer',
    ],
    ['a boolean, inline', '{ item(id: true) { id } }', undefined, 'expected a decimal string or a safe integer'],
    [
      'wider than the layout, inline',
      `{ item(id: "${tooWide}") { id } }`,
      undefined,
      "wider than the layout's 63 bits",
    ],
    [
      'wider than the layout, as a variable',
      'query($id: Snowflake!) { item(id: $id) { id } }',
      { id: tooWide },
      "wider than the layout's 63 bits",
    ],
    ['beyond 2^53 as a number, inline', '{ item(id: 9007199254740993) { id } }', undefined, 'beyond 2^53'],
  ] as const)('refuses %s with a GraphQL error that gives the reason', async (_what, query, variables, reason) => {
    const before = received.length;
    const response = await gql(query, variables);
    expect(response.data ?? null).toBeNull();
    expect(response.errors).toHaveLength(1);
    expect(response.errors![0].message).toContain('Snowflake');
    expect(response.errors![0].message).toContain(reason);
    expect(received.length).toBe(before);
    expect(response.status).toBe(400);
    if (driver === 'apollo') {
      expect(response.errors![0].extensions?.code).toBe(
        variables === undefined ? 'GRAPHQL_VALIDATION_FAILED' : 'BAD_USER_INPUT',
      );
    }
  });

  it('refuses a number beyond 2^53 in the variables, which JSON has already rounded', async () => {
    const body = '{"query":"query($id: Snowflake!) { item(id: $id) { id } }","variables":{"id":9007199254740993}}';
    const response = await gql('', undefined, body);
    expect(response.data ?? null).toBeNull();
    expect(response.errors![0].message).toContain('beyond 2^53, so it was already rounded; pass the ID as a string');
  });

  it('maps InvalidSnowflakeError from a resolver to BAD_USER_INPUT with the reason', async () => {
    const response = await gql('mutation { fail(kind: "invalid") }');
    expect(response.errors).toEqual([
      expect.objectContaining({
        message: new InvalidSnowflakeError('12ab', 'expected a non-negative decimal integer (digits only).').message,
        path: ['fail'],
        extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', type: 'InvalidSnowflakeError' }),
      }),
    ]);
  });

  it.each([
    ['fenced', 'WorkerUnavailableError'],
    ['exhausted', 'SequenceExhaustedError'],
    ['redis', 'RedisUnavailableError'],
  ])('maps a transient error (%s) to SERVICE_UNAVAILABLE with a retry hint, logging the cause', async (kind, type) => {
    const response = await gql(`mutation { fail(kind: "${kind}") }`);
    expect(response.status).toBe(200);
    expect(response.errors).toEqual([
      expect.objectContaining({
        message: 'No ID can be issued right now; retry in 1 s.',
        path: ['fail'],
        extensions: expect.objectContaining({ code: 'SERVICE_UNAVAILABLE', type, retryAfterSeconds: 1 }),
      }),
    ]);
    // The cause names Redis addresses and options: the log has it, the client never does (not even in a stack trace).
    expect(response.text).not.toMatch(/10\.1\.2\.3|lease lapsed|maxSyncWaitMs/);
    expect(logger.warnings.some((line) => line.startsWith(`Answered SERVICE_UNAVAILABLE: ${type}: `))).toBe(true);
  });

  it('maps any other library error to INTERNAL_SERVER_ERROR without its message, and logs it', async () => {
    const response = await gql('mutation { fail(kind: "batch") }');
    expect(response.errors).toEqual([
      expect.objectContaining({
        message: 'Internal server error',
        extensions: expect.objectContaining({ code: 'INTERNAL_SERVER_ERROR', type: 'BatchTooLargeError' }),
      }),
    ]);
    expect(response.text).not.toContain('maxSyncWaitMs');
    expect(logger.errors.some((line) => line.includes('BatchTooLargeError') || line.includes('nextBatch('))).toBe(true);
  });

  it("answers the app's HTTP controllers as SnowflakeExceptionFilter does: 503 with Retry-After", async () => {
    const response = await request(url).get('/ids/fenced').expect(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'No ID can be issued right now; retry in 1 s.',
      type: 'WorkerUnavailableError',
    });
  });
});
