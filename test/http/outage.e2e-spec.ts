/**
 * A Redis outage under a real HTTP app, as a user's app meets it: Express on a port, TypeORM on a better-sqlite3
 * file with `@GeneratedId()`, the lease on a real redis-server, the health indicator, and no exception filter. While
 * clients POST without pause, Redis is killed, kept down longer than the wait bound (and the lease's TTL), and
 * brought back empty, so that the namespace settles before any worker ID is handed out again.
 *
 * Every answer must be 201 or 503, each within the bound plus a second; every ID answered is in the database and no
 * row is there twice or without an answer; the health indicator goes down during the outage and up after it; and IDs
 * are issued again once Redis is back.
 */
import 'reflect-metadata';
import { Body, Controller, Module, Post, type INestApplication } from '@nestjs/common';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Test } from '@nestjs/testing';
import Database from 'better-sqlite3';
import { Column, DataSource, Entity, Repository } from 'typeorm';
import { SnowflakeModule } from '../../lib/index.js';
import { GeneratedId, SnowflakeTypeOrmModule, safeIntegerDriver } from '../../lib/typeorm.js';
import { getHealth, HealthModule, snowflakeOf } from '../health/health.fixture.js';
import { sqliteDirectory } from '../support/databases.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep } from '../support/time.js';

const BOUND_MS = 1500;
const TTL_MS = 2000;
/** Longer than the bound and than the lease's TTL: the lease lapses in Redis before it comes back. */
const DOWN_MS = 3500;
const CLIENTS = 4;
const NAMESPACE = 'outage-spec';

@Entity('outage_notes')
class Note {
  @GeneratedId()
  id!: bigint;

  @Column()
  text!: string;
}

@Controller('notes')
class NotesController {
  constructor(@InjectRepository(Note) private readonly notes: Repository<Note>) {}

  @Post()
  async create(@Body() body: { text: string }) {
    const note = await this.notes.save(this.notes.create({ text: body.text }));
    return { id: note.id.toString() };
  }
}

interface Answer {
  status: number;
  ms: number;
  id?: string;
  at: number;
}

interface HealthSample {
  at: number;
  status: number;
  leaseState: unknown;
}

describe('a Redis outage under an HTTP app with TypeORM (real redis-server, better-sqlite3)', () => {
  const files = sqliteDirectory();
  let redis: RedisServer;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    redis = await RedisServer.start();
    await settledNamespace(redis.url, NAMESPACE);
    @Module({
      imports: [
        SnowflakeModule.forRoot({
          redis: { url: redis.url, namespace: NAMESPACE, ttlMs: TTL_MS, connectTimeoutMs: 300, retryBackoffMs: 50 },
          maxAsyncWaitMs: BOUND_MS,
        }),
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: files.path('outage.db'),
          driver: safeIntegerDriver(Database),
          entities: [Note],
          synchronize: true,
        }),
        TypeOrmModule.forFeature([Note]),
        SnowflakeTypeOrmModule,
        HealthModule,
      ],
      controllers: [NotesController],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await redis?.dispose();
    files.remove();
  });

  it('answers 201 or 503 within the bound, loses and doubles no row, reports health, and issues again after', async () => {
    const started = performance.now();
    const now = (): number => performance.now() - started;
    const answers: Answer[] = [];
    const health: HealthSample[] = [];
    let running = true;

    const post = async (text: string): Promise<Answer> => {
      const at = now();
      try {
        const response = await fetch(`${url}/notes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text }),
          signal: AbortSignal.timeout(BOUND_MS + 10_000),
        });
        const body = (await response.json()) as { id?: string };
        return { status: response.status, ms: now() - at, id: body.id, at };
      } catch {
        return { status: 0, ms: now() - at, at };
      }
    };
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = 0; running; n++) answers.push(await post(`client ${client} note ${n}`));
    });
    const watcher = (async () => {
      while (running) {
        const { status, body } = await getHealth(app);
        health.push({ at: now(), status, leaseState: snowflakeOf(body).leaseState });
        await sleep(100);
      }
    })();

    await sleep(1000);
    const killedAt = now();
    await redis.stop();
    await sleep(DOWN_MS);
    // Back on the same port with no data: the namespace settles before a worker ID is handed out again.
    await redis.restart();
    const backAt = now();
    const deadline = backAt + 30_000;
    while (now() < deadline && !answers.some((a) => a.at > backAt && a.status === 201)) await sleep(100);
    await sleep(1000);
    running = false;
    await Promise.all([...clients, watcher]);

    // Every answer is 201 or 503, each within the bound plus a second.
    const statuses = new Set(answers.map((a) => a.status));
    expect([...statuses].filter((status) => status !== 201 && status !== 503)).toEqual([]);
    const slowest = Math.max(...answers.map((a) => a.ms));
    expect(slowest).toBeLessThanOrEqual(BOUND_MS + 1000);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    // A 503 comes after the wait ran out, not before: the lease was given its chance.
    for (const answer of refused) expect(answer.ms).toBeGreaterThanOrEqual(BOUND_MS - 50);

    // Every ID answered is in the database, and the database holds nothing else, nothing twice.
    const answered = answers.filter((a) => a.status === 201).map((a) => a.id!);
    expect(new Set(answered).size).toBe(answered.length);
    const rows = await app.get(DataSource).query<Array<{ id: bigint }>>('SELECT id FROM outage_notes');
    const stored = rows.map((row) => row.id.toString());
    expect(new Set(stored).size).toBe(stored.length);
    expect([...stored].sort()).toEqual([...answered].sort());

    // IDs are issued before the outage and again after Redis came back.
    expect(answers.some((a) => a.status === 201 && a.at + a.ms < killedAt)).toBe(true);
    expect(answers.some((a) => a.status === 201 && a.at > backAt)).toBe(true);

    // Health: up before, down during the outage and the settling (with the lease's state), up at the end.
    const before = health.filter((h) => h.at < killedAt);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((h) => h.status === 200 && h.leaseState === 'held')).toBe(true);
    const down = health.filter((h) => h.at > killedAt && h.status === 503);
    expect(down.length).toBeGreaterThan(0);
    const downStates = new Set(down.map((h) => h.leaseState));
    expect(
      [...downStates].every((state) => ['held', 'fenced', 'lost', 'claiming', 'settling'].includes(state as string)),
    ).toBe(true);
    expect(downStates.has('settling')).toBe(true);
    const last = health.at(-1)!;
    expect(last).toMatchObject({ status: 200, leaseState: 'held' });
  }, 60_000);
});
