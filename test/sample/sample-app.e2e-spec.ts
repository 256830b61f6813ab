import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import { IdService } from 'nestjs-snowflake';
import { redisLeaseOptions } from '../../sample-app/src/config/sample.config.js';
import { settledSharedNamespace } from '../support/shared-redis.js';
import { createPostgresDatabase, http, POSTGRES, startSampleApp, tempDirectory } from './sample-app.harness.js';
import { skipVisibly } from '../support/skip-notice.js';

interface UserBody {
  id: string;
  email: string;
  name: string;
  orders?: OrderBody[];
}
interface OrderBody {
  id: string;
  reference: string;
  item: string;
  quantity: number;
}
interface PartsBody {
  id: string;
  timestamp: number;
  date: string;
  datacenterId: number;
  workerId: number;
  sequence: number;
}
interface NoteBody {
  id: string;
  subjectId: string | null;
  text: string;
}

/** Crockford base32 digits to a bigint, written here again so that the test does not read them with the library. */
function parseBase32(text: string): bigint {
  return [...text.toLowerCase()].reduce(
    (value, digit) => value * 32n + BigInt('0123456789abcdefghjkmnpqrstvwxyz'.indexOf(digit)),
    0n,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same checks on each database the sample supports. */
function sampleSuite(database: () => string): void {
  let app: INestApplication;
  let ids: IdService;

  beforeAll(async () => {
    const { url, namespace } = await settledSharedNamespace('sample-e2e');
    app = await startSampleApp({
      REDIS_URL: url,
      DATABASE_URL: database(),
      SNOWFLAKE_NAMESPACE: namespace,
      SNOWFLAKE_LEASE_TTL_MS: '2000',
    });
    ids = app.get(IdService);
  });

  afterAll(async () => {
    await app?.close();
  });

  it('creates a user with orders in one cascade and reads them back exactly', async () => {
    const created = await http(app)
      .post('/users')
      .send({
        email: 'ada@example.com',
        name: 'Ada',
        orders: [
          { item: 'book', quantity: 2 },
          { item: 'pen', quantity: 1 },
        ],
      })
      .expect(201);
    const user = created.body as UserBody;
    // IDs travel as decimal strings: above 2^53, a JSON number would round them.
    expect(user.id).toMatch(/^\d+$/);
    expect(BigInt(user.id)).toBeGreaterThan(2n ** 53n);
    expect(user.orders!.map((order) => order.item)).toEqual(['book', 'pen']);
    const orderIds = user.orders!.map((order) => BigInt(order.id));
    expect(new Set([BigInt(user.id), ...orderIds]).size).toBe(3);

    const read = await http(app).get(`/users/${user.id}`).expect(200);
    expect(read.body).toEqual({
      id: user.id,
      email: 'ada@example.com',
      name: 'Ada',
      orders: [...user.orders!].sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1)),
    });
  });

  it('adds an order to a user, and answers 404 and 400 for unknown and malformed IDs', async () => {
    const user = (await http(app).post('/users').send({ email: 'bob@example.com', name: 'Bob' }).expect(201))
      .body as UserBody;
    expect(user.orders).toEqual([]);
    const order = (await http(app).post(`/users/${user.id}/orders`).send({ item: 'ink', quantity: 3 }).expect(201))
      .body as OrderBody;
    expect(BigInt(order.id)).toBeGreaterThan(BigInt(user.id));

    const read = (await http(app).get(`/users/${user.id}`).expect(200)).body as UserBody;
    expect(read.orders).toEqual([{ id: order.id, reference: order.reference, item: 'ink', quantity: 3 }]);

    await http(app).get(`/users/${ids.next()}`).expect(404);
    const malformed = await http(app).get('/users/12ab').expect(400);
    expect(malformed.body).toMatchObject({ statusCode: 400, error: 'Bad Request', type: 'InvalidSnowflakeError' });
    await http(app).post('/users').send({ email: '', name: 'x' }).expect(400);
  });

  it('finds an order by its reference, which every order in a response carries', async () => {
    const user = (
      await http(app)
        .post('/users')
        .send({ email: 'dee@example.com', name: 'Dee', orders: [{ item: 'map', quantity: 1 }] })
        .expect(201)
    ).body as UserBody;
    const added = (await http(app).post(`/users/${user.id}/orders`).send({ item: 'atlas', quantity: 2 }).expect(201))
      .body as OrderBody;
    const orders = [...user.orders!, added];
    const read = (await http(app).get(`/users/${user.id}`).expect(200)).body as UserBody;
    expect(read.orders).toEqual(orders);
    for (const order of orders) {
      // The reference is the order's ID in base32 with its prefix: 13 digits for 63 bits.
      expect(order.reference).toMatch(/^ord_[0-9a-hjkmnp-tv-z]{13}$/);
      expect(parseBase32(order.reference.slice(4))).toBe(BigInt(order.id));
      const found = await http(app).get(`/orders/${order.reference}`).expect(200);
      expect(found.body).toEqual(order);
      // Read in either case, as base32 is.
      const upper = `ord_${order.reference.slice(4).toUpperCase()}`;
      expect((await http(app).get(`/orders/${upper}`).expect(200)).body).toEqual(order);
    }
    expect((await http(app).get(`/orders/${added.reference}`).expect(200)).body).toMatchObject({ item: 'atlas' });
  });

  it('answers 400 naming the position of a bad character in a reference, and 404 for an unknown one', async () => {
    const order = (
      await http(app)
        .post('/users')
        .send({ email: 'eve@example.com', name: 'Eve', orders: [{ item: 'lamp', quantity: 1 }] })
        .expect(201)
    ).body.orders[0] as OrderBody;
    // Crockford base32 has no "u": position 4 + 5 = 9 of the text.
    const wrong = `${order.reference.slice(0, 9)}u${order.reference.slice(10)}`;
    const malformed = await http(app).get(`/orders/${wrong}`).expect(400);
    expect(malformed.body).toMatchObject({ statusCode: 400, type: 'InvalidSnowflakeTextError' });
    expect(malformed.body.message).toMatch(/"u" at position 9 is not a Crockford base32 digit.*did you mean v\?/);
    const user = await http(app)
      .get(`/orders/usr_${order.reference.slice(4)}`)
      .expect(400);
    expect(user.body.message).toMatch(/"u" at position 0: expected the prefix "ord_"/);
    await http(app).get(`/orders/${order.id}`).expect(400);
    await http(app)
      .get(`/orders/ord_${'0'.repeat(12)}1`)
      .expect(404);
  });

  it('gives every ID the worker and datacenter of the lease the app holds', async () => {
    const health = await http(app).get('/health').expect(200);
    const leased = (health.body as { info: { snowflake: { workerId: number; datacenterId: number } } }).info.snowflake;
    expect(leased.workerId).toBe(ids.workerId);

    const user = (await http(app).post('/users').send({ email: 'cy@example.com', name: 'Cy' }).expect(201))
      .body as UserBody;
    const note = (await http(app).post('/notes').send({ text: 'created', subjectId: user.id }).expect(201))
      .body as NoteBody;
    const next = (await http(app).get('/ids/next').expect(200)).body as PartsBody;
    for (const id of [user.id, note.id, next.id]) {
      const parts = (await http(app).get(`/ids/${id}`).expect(200)).body as PartsBody;
      expect(parts).toMatchObject({ id, workerId: leased.workerId, datacenterId: leased.datacenterId });
      expect(Math.abs(parts.timestamp - Date.now())).toBeLessThan(60_000);
      expect(new Date(parts.date).getTime()).toBe(parts.timestamp);
    }
    expect(next).toMatchObject({ workerId: leased.workerId });
    expect(BigInt(next.id)).toBeGreaterThan(BigInt(note.id));
  });

  it('answers 400 with the typed error for a malformed ID', async () => {
    for (const bad of ['abc', '-1', '1.5', '99999999999999999999999999']) {
      const response = await http(app)
        .get(`/ids/${encodeURIComponent(bad)}`)
        .expect(400);
      expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request', type: 'InvalidSnowflakeError' });
      expect((response.body as { message: string }).message).toContain('Invalid snowflake ID');
    }
  });

  it('lists users created in a time range through the ID bounds', async () => {
    const created: UserBody[] = [];
    for (const name of ['Dee', 'Eve', 'Fay']) {
      created.push(
        (
          await http(app)
            .post('/users')
            .send({ email: `${name}@example.com`, name })
            .expect(201)
        ).body as UserBody,
      );
      await sleep(15);
    }
    const times = created.map((user) => ids.decode(user.id).timestamp);

    const middle = (await http(app).get('/users').query({ from: times[1], to: times[1] }).expect(200))
      .body as UserBody[];
    expect(middle.map((user) => user.name)).toEqual(['Eve']);

    const from = new Date(times[0]).toISOString();
    const to = new Date(times[2]).toISOString();
    const all = (await http(app).get('/users').query({ from, to }).expect(200)).body as UserBody[];
    expect(all.map((user) => user.id)).toEqual(created.map((user) => user.id));

    const later = (
      await http(app)
        .get('/users')
        .query({ from: times[2] + 1 })
        .expect(200)
    ).body as UserBody[];
    expect(later).toEqual([]);
    await http(app).get('/users').query({ from: 'yesterday' }).expect(400);
    // A `to` beyond the layout's last instant (2100 here) is lowered to it, like a `from` before the epoch.
    const upTo2100 = (await http(app).get('/users').query({ from: times[0], to: '2100-01-01T00:00:00Z' }).expect(200))
      .body as UserBody[];
    expect(upTo2100.map((user) => user.id)).toEqual(created.map((user) => user.id));
  });

  it('answers 409 for an email that is taken, and keeps the first user', async () => {
    const first = (await http(app).post('/users').send({ email: 'taken@example.com', name: 'First' }).expect(201))
      .body as UserBody;
    const again = await http(app).post('/users').send({ email: 'taken@example.com', name: 'Second' }).expect(409);
    expect((again.body as { message: string }).message).toContain('taken@example.com');
    const stored = (await http(app).get(`/users/${first.id}`).expect(200)).body as UserBody;
    expect(stored.name).toBe('First');
  });

  it('stores audit notes through Prisma with IDs from the extension', async () => {
    const user = (await http(app).post('/users').send({ email: 'gus@example.com', name: 'Gus' }).expect(201))
      .body as UserBody;
    const first = (await http(app).post('/notes').send({ text: 'signed up', subjectId: user.id }).expect(201))
      .body as NoteBody;
    const second = (await http(app).post('/notes').send({ text: 'verified', subjectId: user.id }).expect(201))
      .body as NoteBody;
    await http(app).post('/notes').send({ text: 'unrelated' }).expect(201);
    expect(BigInt(second.id)).toBeGreaterThan(BigInt(first.id));

    const notes = (await http(app).get('/notes').query({ subject: user.id }).expect(200)).body as NoteBody[];
    expect(notes).toEqual([
      { id: first.id, subjectId: user.id, text: 'signed up' },
      { id: second.id, subjectId: user.id, text: 'verified' },
    ]);
    await http(app).get('/notes').query({ subject: 'x1' }).expect(400);
  });

  it('gives an audit note created without the extension no ID from the database', async () => {
    const { NotesPrisma } = await import('../../sample-app/src/notes/notes.prisma.js');
    const { client } = app.get(NotesPrisma);
    await expect(client.$executeRawUnsafe("INSERT INTO audit_notes (text) VALUES ('no id')")).rejects.toThrow(
      /not.null/i,
    );
    expect(await client.auditNote.count({ where: { text: 'no id' } })).toBe(0);
  });
}

describe("sample app's lease settings from ConfigService", () => {
  /** A ConfigService over these variables only, so that the test's own environment cannot leak in. */
  const configOf = (env: Record<string, string>) => ({ get: (name: string) => env[name] }) as unknown as ConfigService;

  it('reads REDIS_URL, SNOWFLAKE_NAMESPACE and SNOWFLAKE_LEASE_TTL_MS, with defaults when unset', () => {
    expect(
      redisLeaseOptions(
        configOf({ REDIS_URL: 'redis://cache:6380', SNOWFLAKE_NAMESPACE: 'orders', SNOWFLAKE_LEASE_TTL_MS: '4000' }),
      ),
    ).toEqual({ url: 'redis://cache:6380', namespace: 'orders', ttlMs: 4000 });
    expect(redisLeaseOptions(configOf({}))).toEqual({
      url: 'redis://127.0.0.1:6379',
      namespace: 'sample-app',
      ttlMs: undefined,
    });
  });

  it('names the variable when the TTL is not a number', () => {
    expect(() => redisLeaseOptions(configOf({ SNOWFLAKE_LEASE_TTL_MS: '10s' }))).toThrow(
      'SNOWFLAKE_LEASE_TTL_MS must be a non-negative integer, got "10s".',
    );
  });
});

describe('sample app on SQLite (better-sqlite3)', () => {
  const dir = tempDirectory();
  afterAll(() => dir.remove());
  sampleSuite(() => `file:${dir.path('sample.sqlite')}`);
});

const postgres = await createPostgresDatabase();
if (postgres === undefined) {
  skipVisibly(
    `PostgreSQL not reachable at ${POSTGRES.host}:${POSTGRES.port}`,
    "the sample app's PostgreSQL run did not happen.",
    'needs PostgreSQL',
  );
} else {
  describe('sample app on PostgreSQL (pg)', () => {
    afterAll(() => postgres.drop());
    sampleSuite(() => postgres.url);
  });
}
