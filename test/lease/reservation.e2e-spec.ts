import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { IdService, SnowflakeModule } from '../../lib/index.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { LeaseProtocol, type ClaimRequest, type RenewRequest } from '../../lib/lease/redis/lease.protocol.js';
import { CLAIM_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import { LeaseScripts } from '../support/lease-scripts.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep, waitUntil } from '../support/time.js';

/**
 * A serving instance keeps serving: an instance that lost its ID to a data loss while the namespace settled gets
 * it back ahead of instances that never booted, for one TTL after settling ends. The scripts one call at a time
 * against a real redis-server, in a namespace of two IDs.
 */
describe('an ID reserved for the holder that lost it while the namespace settled (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;
  let n = 0;
  let tag: string;
  const TTL = 1000;
  const MARGIN = 200;
  const CONFIG = 'ttlMs=1000 layout=test';
  const IDS = 2;

  /** The namespace of the test that runs: a new hash tag each. */
  let scripts: LeaseScripts;
  let idCount = IDS;
  const protocol = () => scripts.protocol({ ttlMs: TTL, config: CONFIG, idCount, fenceMarginMs: MARGIN });
  const run = (lua: string, id: number, args: (string | number)[]) => scripts.run(lua, protocol(), id, args);

  /** Claims as the lease does: names a candidate (the prior ID first), follows `retry` and `busy`. */
  async function claim(token: string, prior?: ClaimRequest['prior']) {
    let candidate = prior?.id ?? 0;
    for (;;) {
      const request = { token, holderNowMs: Date.now(), host: 'h', pid: 1, excluded: [], candidate, prior };
      const reply = LeaseProtocol.decodeClaim(await run(CLAIM_SCRIPT, candidate, protocol().claimArgs(request)));
      // `busy`: live or reserved IDs passed over at the cursor, 16 at a time; the lease claims again at once.
      if (reply.kind === 'busy') continue;
      if (reply.kind !== 'retry') return reply;
      candidate = reply.candidate;
    }
  }

  async function held(token: string, prior?: ClaimRequest['prior']) {
    const reply = await claim(token, prior);
    if (reply.kind !== 'ok') throw new Error(`claim by ${token}: ${JSON.stringify(reply)}`);
    return reply;
  }

  /** A renewal under `marker`; `lapsed` sends a previous expiry already past (a holder paused through the outage). */
  async function renew(id: number, token: string, marker: string, lapsed: boolean) {
    const rev = Number((await redis.hget(scripts.keys.recordPrefix + id, 'rev')) ?? '0');
    const request: RenewRequest = {
      id,
      token,
      marker,
      ceilingMs: Date.now() + TTL,
      previousExpiry: lapsed ? Date.now() - 1 : Date.now() + TTL,
      marginMs: MARGIN,
      knownRevs: [rev],
      rev: rev + 1,
    };
    return LeaseProtocol.decodeRenew(await run(RENEW_SCRIPT, id, protocol().renewArgs(request, `fresh-${token}`)));
  }

  /** Moves the marker's creation back by `ms`: settling (and then the reservations' grace) ends that much sooner. */
  const backdate = async (ms: number) => {
    const created = Number(await redis.hget(scripts.keys.meta, 'created'));
    await redis.hset(scripts.keys.meta, 'created', created - ms);
  };
  const settle = () => backdate(SETTLE_AFTER_LOSS_MS + 10);
  const loseEverything = async () => redis.del(...(await redis.keys(`snowflake:{${tag}}:*`)));

  /** Two holders, A on ID 0 and B on ID 1; then Redis loses the namespace and a waiting instance starts settling. */
  async function fullNamespaceAfterLoss() {
    expect((await claim('first')).kind).toBe('settling');
    await settle();
    const a = await held('A');
    const b = await held('B');
    expect([a.id, b.id]).toEqual([0, 1]);
    await loseEverything();
    expect((await claim('C')).kind).toBe('settling');
    return { a, b };
  }

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.dispose();
  });
  beforeEach(() => {
    tag = `reserve${++n}`;
    scripts = new LeaseScripts(redis, tag);
    idCount = IDS;
  });

  it('hands the lost ID to its former holder, not to the instance that waited at the cursor', async () => {
    const { a, b } = await fullNamespaceAfterLoss();
    expect(await renew(a.id, 'A', a.marker, true)).toMatchObject({ kind: 'lost', reason: 'marker' });
    expect(await renew(b.id, 'B', b.marker, false)).toMatchObject({ kind: 'recovered' });
    expect(await redis.hget(scripts.keys.meta, 'reserved:0')).toBe('A');
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBe('1');
    await settle();

    const waiting = await claim('C');
    expect(waiting.kind).toBe('exhausted');
    const graceEnd = Number(await redis.hget(scripts.keys.meta, 'created')) + SETTLE_AFTER_LOSS_MS + TTL;
    // The waiting instance is told when the reserved ID frees up for everyone, at the latest.
    expect(waiting.kind === 'exhausted' && waiting.soonestExpiry).toBeLessThanOrEqual(graceEnd);

    expect(await held('A2', { id: 0, token: 'A' })).toMatchObject({ id: 0 });
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBeNull();
    expect(await redis.hget(scripts.keys.meta, 'reserved:0')).toBeNull();
    expect((await claim('C')).kind).toBe('exhausted');
  });

  it('keeps the ID for its holder when the records survived, with the floor of its record', async () => {
    expect((await claim('first')).kind).toBe('settling');
    await settle();
    const a = await held('A');
    await held('B');
    const ceiling = Number(await redis.hget(scripts.keys.recordPrefix + a.id, 'ceiling'));
    // Another Redis process serves the namespace (a failover): the keys survived, the marker changes.
    await redis.hset(scripts.keys.meta, 'server', 'other-process:replid');
    // A's lease lapses meanwhile (it was paused through the failover), B renews in time.
    await redis.zadd(scripts.keys.expiry, Date.now() - 1, String(a.id));
    expect(await renew(a.id, 'A', a.marker, true)).toMatchObject({ kind: 'lost', reason: 'marker' });
    await settle();
    expect((await claim('C')).kind).toBe('exhausted');
    expect(await held('A2', { id: a.id, token: 'A' })).toMatchObject({ id: a.id, floorMs: ceiling });
  });

  it('reserves nothing for a holder that learns of its loss after settling ended', async () => {
    const { a, b } = await fullNamespaceAfterLoss();
    expect(await renew(b.id, 'B', b.marker, false)).toMatchObject({ kind: 'recovered' });
    await settle();
    expect(await renew(a.id, 'A', a.marker, true)).toMatchObject({ kind: 'lost', reason: 'marker' });
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBeNull();
    expect(await held('C')).toMatchObject({ id: 0 });
  });

  it('lets every instance have the ID one TTL after settling ended, and never for another token', async () => {
    const { a } = await fullNamespaceAfterLoss();
    expect(await renew(a.id, 'A', a.marker, true)).toMatchObject({ kind: 'lost', reason: 'marker' });
    await settle();
    // A claim that names the ID with a token that never held it gets nothing reserved.
    expect(await claim('X', { id: 0, token: 'not-A' })).toMatchObject({ kind: 'ok', id: 1 });
    await backdate(TTL);
    expect(await held('C')).toMatchObject({ id: 0 });
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBeNull();
    expect(await redis.hget(scripts.keys.meta, 'reserved:0')).toBeNull();
  });

  it('keeps 300 reservations apart: newcomers get the free IDs, every former holder its own', async () => {
    idCount = 512;
    expect((await claim('first')).kind).toBe('settling');
    await settle();
    const holders = [];
    for (let i = 0; i < 300; i++) holders.push({ token: `H${i}`, ...(await held(`H${i}`)) });
    await loseEverything();
    expect((await claim('newcomer')).kind).toBe('settling');
    for (const holder of holders) {
      expect(await renew(holder.id, holder.token, holder.marker, true)).toMatchObject({ kind: 'lost' });
    }
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBe('300');
    await settle();
    const reservedIds = new Set(holders.map((holder) => holder.id));
    for (let i = 0; i < 20; i++) {
      const newcomer = await held(`N${i}`);
      expect(reservedIds.has(newcomer.id)).toBe(false);
    }
    for (const holder of holders) {
      expect(await held(`${holder.token}-again`, { id: holder.id, token: holder.token })).toMatchObject({
        id: holder.id,
      });
    }
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBeNull();
    // Every reservation is a field of its own: nothing of them is left once each was taken.
    const fields = await redis.hkeys(scripts.keys.meta);
    expect(fields.filter((field) => field.startsWith('reserved'))).toEqual([]);
  });

  it('drops the reservations when the namespace loses its data again', async () => {
    const { a } = await fullNamespaceAfterLoss();
    expect(await renew(a.id, 'A', a.marker, true)).toMatchObject({ kind: 'lost', reason: 'marker' });
    await redis.hset(scripts.keys.meta, 'server', 'other-process:replid');
    expect((await claim('C')).kind).toBe('settling');
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBeNull();
    expect(await redis.hget(scripts.keys.meta, 'reserved:0')).toBeNull();
  });
});

describe('a serving instance keeps serving after Redis comes back empty (real modules, real redis-server)', () => {
  /** Two IDs: two serving instances fill the namespace, a third waits. */
  const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 1, sequenceBits: 12 } as const;
  const LEASE = { ttlMs: 3000, fenceMarginMs: 1500, maxClockOffsetMs: 600, retryBackoffMs: 50 };
  let server: RedisServer;
  let admin: Redis;
  const modules: TestingModule[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
    await settledNamespace(admin, 'serving');
  });
  afterAll(async () => {
    await Promise.all(modules.map((m) => m.close().catch(() => undefined)));
    admin.disconnect();
    await server.dispose();
  });

  async function compile() {
    const module = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          clockBackToleranceMs: 100,
          redis: { url: server.url, namespace: 'serving', waitForFreeWorkerIdMs: 60_000, ...LEASE },
        }),
      ],
    }).compile();
    modules.push(module);
    return module;
  }

  it('gives both former holders their IDs back ahead of an instance that was waiting to boot', async () => {
    const [a, b] = await Promise.all([compile(), compile()]);
    await Promise.all([a.init(), b.init()]);
    const [idsA, idsB] = [a.get(IdService), b.get(IdService)];
    const before = [idsA.workerId, idsB.workerId];
    expect([...before].sort()).toEqual([0, 1]);

    // Redis is away longer than the proof window (ttlMs - fenceMarginMs), and comes back empty: both holders fence,
    // and their first renewals afterwards find a new marker with their leases lapsed.
    await server.restartAfter(LEASE.ttlMs - LEASE.fenceMarginMs + 1000);
    // A third instance boots meanwhile: the namespace settles, then has no free ID (its bootstrap waits).
    let booted = false;
    const waiting = compile().then(async (module) => {
      await module.init();
      booted = true;
      return module;
    });
    const meta = 'snowflake:{serving:dc0}:meta';
    await waitUntil(
      async () => (await admin.hget(meta, 'reserved').catch(() => null)) === '2',
      15_000,
      'both lost IDs to be reserved',
    );
    expect(idsA.status().lease!.state).not.toBe('held');

    // Settling ends (backdated rather than waited for): the reservations decide who claims first.
    await admin.hset(meta, 'created', Date.now() - SETTLE_AFTER_LOSS_MS - 10);
    await waitUntil(
      () => idsA.status().lease!.state === 'held' && idsB.status().lease!.state === 'held',
      15_000,
      'both former holders to hold their IDs again',
    );
    expect([idsA.workerId, idsB.workerId]).toEqual(before);
    expect(typeof idsA.next()).toBe('bigint');
    await sleep(LEASE.ttlMs / 2);
    expect(booted).toBe(false);

    // The waiting instance boots as soon as a serving one leaves.
    await a.close();
    expect((await waiting).get(IdService).workerId).toBe(before[0]);
  }, 30_000);
});
