import { Redis } from 'ioredis';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { LeaseProtocol, type ClaimRequest, type RenewRequest } from '../../lib/lease/redis/lease.protocol.js';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import { LeaseScripts } from '../support/lease-scripts.js';
import { RedisServer } from '../support/redis-server.js';
import { mulberry32 } from '../support/seeded-random.js';
import { waitUntil } from '../support/time.js';

/**
 * The lease scripts one call at a time against a real redis-server, for the cases the module's own flow reaches
 * only through rare interleavings or operator actions: a lost holder's note meeting the current holder's release,
 * keys deleted while others survive, and a holder taking its ID back after Redis lost its data.
 */
describe('lease scripts (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;
  let n = 0;
  const TTL = 1000;
  const MARGIN = 200;
  const CONFIG = 'ttlMs=1000 layout=test';

  /** The namespace of the test that runs: a new hash tag each. */
  let scripts: LeaseScripts;
  const protocol = (idCount: number, config = CONFIG, ttlMs = TTL) =>
    scripts.protocol({ ttlMs, config, idCount, fenceMarginMs: MARGIN });

  async function claim(
    token: string,
    idCount: number,
    { excluded = [] as number[], config = CONFIG, ttl = TTL, prior = undefined as ClaimRequest['prior'] } = {},
  ) {
    const p = protocol(idCount, config, ttl);
    // As the lease does: name a candidate (the ID lost in a data loss first), and claim again naming the one a `retry`
    // answer names.
    let candidate = prior?.id ?? 0;
    for (;;) {
      const request = { token, holderNowMs: Date.now(), host: 'test-host', pid: 1, excluded, candidate, prior };
      const args = p.claimArgs(request);
      const reply = LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, candidate, args));
      if (reply.kind !== 'retry') return reply;
      candidate = reply.candidate;
    }
  }

  /** A claim that must succeed: its ID, marker and expiry. */
  async function held(token: string, idCount = 4) {
    const reply = await claim(token, idCount);
    if (reply.kind !== 'ok') throw new Error(`claim by ${token}: ${JSON.stringify(reply)}`);
    return reply;
  }

  async function renew(
    request: Partial<RenewRequest> & Pick<RenewRequest, 'id' | 'token' | 'marker'>,
    config = CONFIG,
    ttl = TTL,
  ) {
    const p = protocol(4, config, ttl);
    const full: RenewRequest = {
      ceilingMs: Date.now() + TTL,
      previousExpiry: 0,
      marginMs: MARGIN,
      // An honest holder knows the revision it last wrote, which the record shows unless it was rolled back.
      ...(await revisions(request.id)),
      ...request,
    };
    return LeaseProtocol.decodeRenew(
      await scripts.run(RENEW_SCRIPT, p, full.id, p.renewArgs(full, `fresh-${Math.random()}`)),
    );
  }

  async function revisions(id: number): Promise<Pick<RenewRequest, 'knownRevs' | 'rev'>> {
    const current = Number((await redis.hget(scripts.keys.recordPrefix + id, 'rev')) ?? '0');
    return { knownRevs: [current], rev: current + 1 };
  }

  const release = async (id: number, token: string, lastMs: number) =>
    LeaseProtocol.decodeRelease(
      await scripts.run(RELEASE_SCRIPT, protocol(4), id, protocol(4).releaseArgs(id, token, lastMs, 'fresh')),
    );

  const note = async (id: number, lastMs: number) =>
    LeaseProtocol.decodeNote(
      await scripts.run(NOTE_SCRIPT, protocol(4), id, protocol(4).noteArgs(id, lastMs, 'fresh')),
    );

  /** Ends the namespace's settling by backdating its marker. */
  const settle = async () => redis.hset(scripts.keys.meta, 'created', Date.now() - SETTLE_AFTER_LOSS_MS - 10);

  /** A namespace past its first-use settling. */
  async function settledNamespace(): Promise<void> {
    expect((await claim('first', 0)).kind).toBe('settling');
    await settle();
  }

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  });

  afterAll(async () => {
    redis.disconnect();
    await server.dispose();
  });

  beforeEach(async () => {
    scripts = new LeaseScripts(redis, `scripts${++n}`);
    await settledNamespace();
  });

  it('ends every reply with the server time, the Redis process run_id and its replication ID', async () => {
    const before = Date.now();
    const reply = await held('a');
    const info = await redis.info('server');
    expect(reply.runId).toBe(/run_id:(\w+)/.exec(info)![1]);
    expect(reply.replId).toBe(/master_replid:(\w+)/.exec(await redis.info('replication'))![1]);
    expect(reply.serverMs).toBeGreaterThanOrEqual(before - 5);
    expect(reply.serverMs).toBeLessThanOrEqual(Date.now() + 5);
  });

  it("keeps a lost holder's note when the current holder releases with a lower last timestamp", async () => {
    const now = Date.now();
    expect((await held('current', 1)).id).toBe(0);
    // A holder that lost ID 0 while its clock ran 5 s ahead leaves a note of its last timestamp.
    await note(0, now + 5000);
    // The current holder releases with its own exact last timestamp, lower than the note.
    expect((await release(0, 'current', now)).kind).toBe('released');
    expect(Number(await redis.hget(scripts.keys.recordPrefix + '0', 'ceiling'))).toBe(now);

    // The next holder's floor is still the note, not the release's lower ceiling.
    const next = await held('next', 1);
    expect([next.id, next.floorMs]).toEqual([0, now + 5000]);
  });

  describe('a partial loss (keys deleted while the meta survived) is a loss, never "free"', () => {
    const cases: [string, () => Promise<unknown>][] = [
      ['the cursor', () => redis.del(scripts.keys.cursor)],
      ['the expiry set', () => redis.del(scripts.keys.expiry)],
      ['one member of the expiry set', () => redis.zrem(scripts.keys.expiry, '1')],
      ['the meta', () => redis.del(scripts.keys.meta)],
    ];
    it.each(cases)('deleting %s makes the namespace settle instead of handing out a held ID', async (_, lose) => {
      const a = await held('a');
      await held('b');
      await lose();
      const after = await claim('c', 4);
      expect(after.kind).toBe('settling');
      expect(await redis.hget(scripts.keys.meta, 'marker')).not.toBe(a.marker);
      // The holders see the new marker at their next renewal: without proof of a live lease they have lost it.
      expect(await renew({ id: a.id, token: 'a', marker: a.marker })).toMatchObject({ kind: 'lost', reason: 'marker' });
    });

    it('a released ID whose record was deleted waits one fence margin, then is handed out without a new marker', async () => {
      const a = await held('a', 1);
      await release(a.id, 'a', Date.now());
      await redis.del(scripts.keys.recordPrefix + '0');
      // The record carried the last timestamp; without it the time rule covers the ID one margin after release.
      const early = await claim('b', 1);
      expect(early.kind).toBe('wait');
      if (early.kind !== 'wait') throw new Error('unreachable');
      expect(early.waitMs).toBeGreaterThan(0);
      expect(early.waitMs).toBeLessThanOrEqual(MARGIN);
      await new Promise((resolve) => setTimeout(resolve, early.waitMs + 5));
      const later = await claim('b', 1);
      expect(later).toMatchObject({ kind: 'ok', id: 0, floorMs: -1, marker: a.marker });
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(a.marker);
    });

    it('a spent cursor and records evicted again and again never make the namespace settle for ever', async () => {
      // Every ID claimed once, then released: the cursor is spent and the expiry set holds every ID as free.
      const first = [await held('a', 2), await held('b', 2)];
      const marker = first[0].marker;
      for (const [i, lease] of first.entries()) await release(lease.id, i === 0 ? 'a' : 'b', Date.now() - 5000);
      await redis.zadd(scripts.keys.expiry, Date.now() - 5000, '0', Date.now() - 5000, '1');
      // Eviction takes the records of free IDs first (nothing reads them); claims recover at once, every time.
      for (let round = 0; round < 5; round++) {
        await redis.del(scripts.keys.recordPrefix + '0', scripts.keys.recordPrefix + '1');
        const reply = await claim(`c${round}`, 2);
        expect(reply).toMatchObject({ kind: 'ok', floorMs: -1, marker });
        if (reply.kind !== 'ok') throw new Error('unreachable');
        await release(reply.id, `c${round}`, Date.now() - 5000);
        await redis.zadd(scripts.keys.expiry, Date.now() - 5000, String(reply.id));
      }
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(marker);
    });

    it('a live holder whose record was deleted writes it again at its next renewal; nobody settles', async () => {
      const a = await held('a');
      await held('b');
      await redis.del(scripts.keys.recordPrefix + a.id);
      const renewal = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry });
      expect(renewal.kind).toBe('ok');
      expect(await redis.hget(scripts.keys.recordPrefix + a.id, 'token')).toBe('a');
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(a.marker);
      // The live lease is never handed out meanwhile: its expiry entry stands.
      expect(await claim('c', 4)).toMatchObject({ kind: 'ok', id: 2 });
    });

    it("a holder whose record is gone and whose expiry entry is another's (a later claim) loses the ID, without a new marker", async () => {
      const a = await held('a');
      await redis.del(scripts.keys.recordPrefix + a.id);
      await redis.zadd(scripts.keys.expiry, a.expiry + 1, String(a.id));
      expect(await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).toMatchObject({
        kind: 'lost',
        reason: 'missing',
      });
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(a.marker);
    });

    it('a namespace whose keys all survived passes the check on every script', async () => {
      const a = await held('a');
      await note(3, Date.now());
      await release(a.id, 'a', Date.now());
      await held('b');
      const marker = await redis.hget(scripts.keys.meta, 'marker');
      expect((await claim('c', 4)).kind).toBe('ok');
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(marker);
    });
  });

  describe('taking an ID back after a data loss', () => {
    it('restores the ID with the higher of the surviving and the requested ceiling, under the new marker', async () => {
      const a = await held('a');
      await redis.flushall();
      const ceilingMs = Date.now() + 7000;
      const reply = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry, ceilingMs });
      expect(reply.kind).toBe('recovered');
      const record = await redis.hgetall(scripts.keys.recordPrefix + a.id);
      expect(record).toMatchObject({ token: 'a', ceiling: String(ceilingMs) });
      if (reply.kind === 'lost') throw new Error('unreachable');
      expect(record.marker).toBe(reply.marker);
      expect(reply.marker).not.toBe(a.marker);
      // Renewals continue under the new marker.
      expect((await renew({ id: a.id, token: 'a', marker: reply.marker, previousExpiry: reply.expiry })).kind).toBe(
        'ok',
      );
    });

    it('refuses without proof that the previous lease was live when the request arrived', async () => {
      const a = await held('a');
      await redis.flushall();
      // The previous lease's expiry lies within the margin of the server's time: it may have lapsed.
      const lapsing = Date.now() + 100;
      expect(await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: lapsing })).toMatchObject({
        kind: 'lost',
        reason: 'marker',
      });
    });

    it('refuses once the namespace has settled: IDs may have been handed out since', async () => {
      const a = await held('a');
      await redis.flushall();
      expect((await claim('b', 4)).kind).toBe('settling');
      await settle();
      // Settling outlasts any TTL, so a holder that first renews after it has lapsed (a live one that had renewed
      // under the old marker after this one settled would mean a rollback: see below).
      expect(await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: Date.now() - 1 })).toMatchObject({
        kind: 'lost',
        reason: 'marker',
      });
      expect(await redis.hget(scripts.keys.meta, 'cause')).not.toBe('rollback');
    });

    it('refuses an ID another holder took back under the new marker', async () => {
      const a = await held('a');
      await redis.flushall();
      const proof = { previousExpiry: Date.now() + 60_000 };
      expect((await renew({ id: a.id, token: 'a', marker: a.marker, ...proof })).kind).toBe('recovered');
      expect(await renew({ id: a.id, token: 'z', marker: 'an-older-marker', ...proof })).toMatchObject({
        kind: 'lost',
        reason: 'taken',
      });
    });

    it('hands out, after settling, the IDs no holder took back, passing over the ones taken back', async () => {
      const leases = [await held('a'), await held('b'), await held('c')];
      await redis.flushall();
      // a and c take their IDs back in time; b could not reach Redis and fenced itself.
      for (const lease of [leases[0], leases[2]]) {
        const token = lease === leases[0] ? 'a' : 'c';
        const reply = await renew({ id: lease.id, token, marker: lease.marker, previousExpiry: lease.expiry });
        expect(reply.kind).toBe('recovered');
      }
      await settle();
      const d = await held('d');
      expect(d.id).toBe(leases[1].id);
      expect((await held('e')).id).toBe(3);
    });

    it('answers busy, not exhausted, when taken-back leases fill the passed-over cursor range', async () => {
      const leases = [];
      for (let i = 0; i < 18; i++) {
        const reply = await claim(`t${i}`, 40);
        if (reply.kind !== 'ok') throw new Error(JSON.stringify(reply));
        leases.push(reply);
      }
      await redis.flushall();
      for (const [i, lease] of leases.entries()) {
        const p = protocol(40);
        const request = { id: lease.id, token: `t${i}`, marker: lease.marker, previousExpiry: lease.expiry };
        const full = { ceilingMs: Date.now(), marginMs: MARGIN, knownRevs: [0], rev: 1, ...request };
        const reply = LeaseProtocol.decodeRenew(
          await scripts.run(RENEW_SCRIPT, p, full.id, p.renewArgs(full, 'fresh')),
        );
        expect(reply.kind).toBe('recovered');
      }
      await settle();
      expect((await claim('late', 40)).kind).toBe('busy');
      expect(await claim('late', 40)).toMatchObject({ kind: 'ok', id: 18 });
    });
  });

  it('refuses a claim under another configuration while a lease is live, and takes it once none is', async () => {
    const now = Date.now();
    const a = await held('a');
    const { meta } = scripts.keys;
    const other = { config: 'ttlMs=2000 layout=test', ttl: 2000 };
    expect(await claim('b', 4, other)).toMatchObject({ kind: 'mismatch', recorded: CONFIG, live: 1 });
    expect(await redis.hget(meta, 'config')).toBe(CONFIG);

    await release(a.id, 'a', now);
    expect((await claim('b', 4, other)).kind).toBe('ok');
    expect(await redis.hget(meta, 'config')).toBe(other.config);
  });

  it('keeps the contract of a meta that survived a restart, and settles the fixed time whoever restarted it', async () => {
    const a = await held('a');
    const { meta } = scripts.keys;
    // As after a restart with persistence: the meta names another Redis process.
    await redis.hset(meta, 'server', 'an-earlier-process');
    const other = { config: 'ttlMs=500 layout=test', ttl: 500 };
    expect((await claim('b', 4, other)).kind).toBe('settling');
    expect(await redis.hget(meta, 'config')).toBe(CONFIG);
    expect(await redis.hget(meta, 'settleMs')).toBe(String(SETTLE_AFTER_LOSS_MS));
    expect(await redis.hget(meta, 'marker')).not.toBe(a.marker);
    // The holder from before the restart sees the new marker at its next renewal, and takes its ID back with proof.
    expect(await renew({ id: a.id, token: 'a', marker: a.marker })).toMatchObject({ kind: 'lost', reason: 'marker' });
    expect((await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).kind).toBe('recovered');
  });

  it('tells a holder that the namespace took another configuration while it was paused that it lost its lease', async () => {
    const a = await held('a');
    expect((await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).kind).toBe('ok');
    await redis.hset(scripts.keys.meta, 'config', 'ttlMs=2000 layout=test');
    expect(await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).toMatchObject({
      kind: 'lost',
      reason: 'config',
    });
  });

  // A primary paused (SIGSTOP, a VM pause) past its replica's promotion answers, once it runs again, the renewal it
  // had queued from its old data, where the holder's token is still on the record; the promoted node may have handed
  // the ID out meanwhile. Before, the renewal answered `ok` and the holder issued beside the new holder (a review:
  // 2,150 duplicates on a real Redis Cluster).
  it('tells a holder whose lease lapsed on the server before its renewal arrived that it lost it, its token kept or not', async () => {
    const a = await held('a');
    await new Promise((resolve) => setTimeout(resolve, TTL + 50));
    expect(await redis.hget(`${scripts.keys.recordPrefix}${a.id}`, 'token')).toBe('a');
    expect(await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).toMatchObject({
      kind: 'lost',
      reason: 'lapsed',
    });
    // It claims again, as after any loss.
    expect((await claim('a2', 4)).kind).toBe('ok');
  });

  it('renews a lease live on the server though the holder missed the answer that extended it (a lost reply)', async () => {
    const a = await held('a');
    await new Promise((resolve) => setTimeout(resolve, TTL / 2));
    // A renewal ran on the server, but its answer never reached the holder, which still knows only the first expiry.
    const extended = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry });
    expect(extended.kind).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, a.expiry - Date.now() + 50));
    expect((await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).kind).toBe('ok');
  });

  // The same paused primary, the other way round: its `ok` reached the holder, whose next renewal then reaches the
  // promoted node, whose marker is older than the one the holder holds and has settled, which reads as a rollback.
  // An ID another holder took under that marker and holds now stays that holder's.
  it('does not take an ID back as after a rollback while another holder holds it under the current marker', async () => {
    const a = await held('a');
    const meta = scripts.keys.meta;
    const record = `${scripts.keys.recordPrefix}${a.id}`;
    const [seconds, micros] = await redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    // The promoted node's data: another marker, created long ago, under which b holds a's ID.
    await redis.hset(meta, 'marker', 'promoted', 'created', now - 60_000);
    await redis.hset(record, 'token', 'b', 'marker', 'promoted');
    await redis.zadd(scripts.keys.expiry, now + 5 * TTL, String(a.id));
    // a's own lease, as the paused primary confirmed it, runs for a while yet: a proof that it has not lapsed.
    expect(await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: now + 5 * TTL })).toMatchObject({
      kind: 'lost',
      reason: 'taken',
    });
    expect(await redis.hmget(meta, 'marker')).toEqual(['promoted']);
    expect(await redis.hget(record, 'token')).toBe('b');
  });

  describe('the contract after a data loss: no script that arrives first shortens settling or takes an ID early', () => {
    const FLEET = 'ttlMs=3000 fenceMarginMs=600 layout=test';
    const CANARY = { config: 'ttlMs=1000 fenceMarginMs=200 layout=test', ttl: 1000 };

    it('a canary with a shorter TTL that sends the first script after FLUSHALL settles as long as anyone', async () => {
      const a = await held('a', 4);
      await redis.hset(scripts.keys.meta, 'config', FLEET);
      await redis.flushall();
      const first = await claim('canary', 4, CANARY);
      expect(first.kind).toBe('settling');
      if (first.kind !== 'settling') throw new Error('unreachable');
      // Not the canary's own TTL: the fixed time that outlasts every holder's fence, whatever its settings.
      expect(first.waitMs).toBeGreaterThan(SETTLE_AFTER_LOSS_MS - 100);
      expect(await redis.hget(scripts.keys.meta, 'settleMs')).toBe(String(SETTLE_AFTER_LOSS_MS));
      // The fleet's holder takes its ID back and its contract replaces the one the canary's script recorded.
      const back = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry }, FLEET);
      expect(back.kind).toBe('recovered');
      expect(await redis.hget(scripts.keys.meta, 'config')).toBe(FLEET);
      await settle();
      // Settled: the canary is the one refused; the fleet renews on.
      expect(await claim('canary', 4, CANARY)).toMatchObject({ kind: 'mismatch', recorded: FLEET, live: 1 });
      if (back.kind === 'lost') throw new Error('unreachable');
      const next = await renew({ id: a.id, token: 'a', marker: back.marker, previousExpiry: back.expiry }, FLEET);
      expect(next.kind).toBe('ok');
    });

    it('a fleet that lost its IDs in a loss keeps its contract while they are held back for it', async () => {
      // An outage longer than the TTL, then an empty restart: no holder can prove its lease, so none takes its ID back;
      // each renewal is told `lost` and has its ID held back. A canary's script was the first after the loss.
      const a = await held('a', 4);
      const b = await held('b', 4);
      await redis.flushall();
      expect((await claim('canary', 4, CANARY)).kind).toBe('settling');
      expect(await redis.hget(scripts.keys.meta, 'config')).toBe(CANARY.config);
      for (const [lost, token] of [
        [a, 'a'],
        [b, 'b'],
      ] as const) {
        const lapsed = { id: lost.id, token, marker: lost.marker, previousExpiry: Date.now() - 1 };
        expect(await renew(lapsed, FLEET)).toMatchObject({ kind: 'lost', reason: 'marker' });
      }
      expect(await redis.hget(scripts.keys.meta, 'config')).toBe(FLEET);
      await settle();
      // Before, the canary's claim took the namespace here, and the fleet was refused until the canary stopped.
      const refused = await claim('canary', 4, CANARY);
      expect(refused).toMatchObject({ kind: 'mismatch', recorded: FLEET, live: 0, heldBack: 2 });
      const back = await claim('a2', 4, { config: FLEET, prior: { id: a.id, token: 'a' } });
      expect(back).toMatchObject({ kind: 'ok', id: a.id });
      expect(await claim('canary', 4, CANARY)).toMatchObject({ kind: 'mismatch', live: 1, heldBack: 1 });
    });

    it('IDs held back for a fleet that never comes back stop refusing another contract one fleet TTL after settling', async () => {
      const a = await held('a', 4);
      await redis.flushall();
      expect((await claim('canary', 4, CANARY)).kind).toBe('settling');
      const lapsed = { id: a.id, token: 'a', marker: a.marker, previousExpiry: Date.now() - 1 };
      expect(await renew(lapsed, FLEET, 3000)).toMatchObject({ kind: 'lost', reason: 'marker' });
      await settle();
      expect(await claim('canary', 4, CANARY)).toMatchObject({ kind: 'mismatch', heldBack: 1 });
      // The grace is the fleet's TTL (3 s), not the canary's (1 s): a claim with a shorter TTL does not shorten it.
      const createdAgo = async (ms: number) => redis.hset(scripts.keys.meta, 'created', Date.now() - ms);
      await createdAgo(SETTLE_AFTER_LOSS_MS + CANARY.ttl + 500);
      expect(await claim('canary', 4, CANARY)).toMatchObject({ kind: 'mismatch', heldBack: 1 });
      // Once it ends, the reservations lapse; with no lease live, the namespace takes the canary's contract.
      await createdAgo(SETTLE_AFTER_LOSS_MS + 3000 + 10);
      expect((await claim('canary', 4, CANARY)).kind).toBe('ok');
      expect(await redis.hget(scripts.keys.meta, 'config')).toBe(CANARY.config);
      expect(await redis.hget(scripts.keys.meta, 'reservedTtl')).toBeNull();
    });

    it('a holder that took its ID back under one contract refuses a second holder with another', async () => {
      const a = await held('a', 4);
      const b = await held('b', 4);
      await redis.flushall();
      expect((await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).kind).toBe(
        'recovered',
      );
      expect(
        await renew({ id: b.id, token: 'b', marker: b.marker, previousExpiry: b.expiry }, CANARY.config),
      ).toMatchObject({ kind: 'lost', reason: 'config' });
    });
  });

  describe('a rollback in the same process (run_id unchanged) is a loss', () => {
    it('a holder whose record shows an older revision than it wrote starts a new marker and keeps its ID', async () => {
      const a = await held('a');
      const before = await redis.hgetall(scripts.keys.recordPrefix + a.id);
      const lease = { id: a.id, token: 'a', marker: a.marker };
      const first = await renew({ ...lease, previousExpiry: a.expiry, knownRevs: [0], rev: 1 });
      if (first.kind === 'lost') throw new Error(JSON.stringify(first));
      const second = await renew({ ...lease, previousExpiry: first.expiry, knownRevs: [1], rev: 2 });
      if (second.kind === 'lost') throw new Error(JSON.stringify(second));
      // The record comes back as it was before both renewals (DEBUG RELOAD, a restore into the running process).
      await redis.hset(scripts.keys.recordPrefix + a.id, before);
      const after = await renew({ ...lease, previousExpiry: second.expiry, knownRevs: [2], rev: 3 });
      expect(after.kind).toBe('recovered');
      expect(await redis.hget(scripts.keys.meta, 'marker')).not.toBe(a.marker);
      expect((await claim('newcomer', 4)).kind).toBe('settling');
    });

    // Found by the chaos run: a holder that had just moved to another ID (its old lease lapsed) lost the new one's
    // record and expiry to a rollback, claimed again at once in the rolled-back data, and was handed the ID of a live
    // holder whose lease looked lapsed there: 106 IDs issued twice until that holder's next renewal.
    it('a holder whose record and expiry a rollback took, its lease not lapsed, starts a new marker and loses its ID', async () => {
      const a = await held('a');
      // The namespace's keys as they are, to come back after b's claim (a restore or DEBUG RELOAD into the running
      // process: the same run_id).
      const keys = [
        scripts.keys.meta,
        scripts.keys.cursor,
        scripts.keys.expiry,
        ...[0, 1, 2, 3].map((id) => scripts.keys.recordPrefix + id),
      ];
      const dumps = await Promise.all(keys.map(async (key) => [key, await redis.dumpBuffer(key)] as const));
      const b = await held('b');
      await redis.del(...keys);
      for (const [key, dump] of dumps) if (dump !== null) await redis.restore(key, 0, dump);
      expect(await redis.exists(scripts.keys.recordPrefix + b.id)).toBe(0);
      expect(await renew({ id: b.id, token: 'b', marker: b.marker, previousExpiry: b.expiry })).toMatchObject({
        kind: 'lost',
        reason: 'missing',
      });
      expect(await redis.hget(scripts.keys.meta, 'marker')).not.toBe(a.marker);
      // b's next claim (and anyone's) waits for the settling, while a takes its ID back into the new marker.
      expect((await claim('b2', 4)).kind).toBe('settling');
      expect((await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).kind).toBe(
        'recovered',
      );
    });

    it('a rollback to before a marker change is a rollback, not a settled loss: a new marker, the holder keeps its ID', async () => {
      const a = await held('a');
      const before = await redis.hgetall(scripts.keys.meta);
      // Another Redis process serves the namespace (a failover without loss): a new marker, and the holder takes its
      // ID back under it.
      await redis.hset(scripts.keys.meta, 'server', 'other-process:replid');
      const taken = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry });
      expect(taken.kind).toBe('recovered');
      if (taken.kind !== 'recovered') return;
      // The data goes back to before that marker in the same process (a restore or DEBUG RELOAD): the old marker,
      // settled long ago, is current again, though the holder renewed under the new one a moment ago.
      await redis.hset(scripts.keys.meta, before);
      const renewed = await renew({ id: a.id, token: 'a', marker: taken.marker, previousExpiry: taken.expiry });
      expect(renewed.kind).toBe('recovered');
      expect(await redis.hget(scripts.keys.meta, 'cause')).toBe('rollback');
      expect(await redis.hget(scripts.keys.meta, 'marker')).not.toBe(before.marker);
      // No ID is handed out before every holder from before the rollback had its say.
      expect((await claim('waiting', 4)).kind).toBe('settling');
    });

    it('a renewal whose reply was lost (the script ran) is not mistaken for a rollback', async () => {
      const a = await held('a');
      const lease = { id: a.id, token: 'a', marker: a.marker };
      const answered = await renew({ ...lease, previousExpiry: a.expiry, knownRevs: [0], rev: 1 });
      if (answered.kind === 'lost') throw new Error(JSON.stringify(answered));
      // Sent with revision 2; the reply never arrived, so the holder still knows 1 as answered, and 2 as sent.
      await renew({ ...lease, previousExpiry: answered.expiry, knownRevs: [1], rev: 2 });
      const next = await renew({ ...lease, previousExpiry: answered.expiry, knownRevs: [1, 2], rev: 3 });
      expect(next.kind).toBe('ok');
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(a.marker);
    });

    // Found by a review: ioredis re-sends a command left unanswered when its connection dropped (an app's own client,
    // with autoResendUnfulfilledCommands on by default), so a renewal that ran may run again, and found the revision it
    // had written itself: the namespace settled for 12 s, and every holder warned of a data loss.
    it('a renewal that runs twice (re-sent after a reconnect) is not mistaken for a rollback', async () => {
      const a = await held('a');
      const request = { id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry, knownRevs: [0], rev: 1 };
      expect((await renew(request)).kind).toBe('ok');
      expect(await renew(request)).toMatchObject({ kind: 'ok', marker: a.marker });
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(a.marker);
      expect((await claim('newcomer', 4)).kind).toBe('ok');
    });

    // Found by a review: a renewal given up on (timed out) while the connection stayed up, the next one sent, then the
    // connection dropped: the client re-sends both, in order, and the first finds the second's revision.
    it('a renewal re-run behind a later one of the same holder changes nothing and starts no marker', async () => {
      const a = await held('a');
      const lease = { id: a.id, token: 'a', marker: a.marker };
      const givenUp = { ...lease, previousExpiry: a.expiry, knownRevs: [0], rev: 1 };
      expect((await renew(givenUp)).kind).toBe('ok');
      const next = await renew({ ...lease, previousExpiry: a.expiry, knownRevs: [0, 1], rev: 2 });
      if (next.kind !== 'ok') throw new Error(JSON.stringify(next));
      expect(await renew(givenUp)).toMatchObject({ kind: 'lost', reason: 'stale' });
      expect(await redis.hget(scripts.keys.recordPrefix + a.id, 'rev')).toBe('2');
      expect(await redis.hget(scripts.keys.meta, 'marker')).toBe(a.marker);
      expect((await renew({ ...lease, previousExpiry: next.expiry, knownRevs: [2], rev: 3 })).kind).toBe('ok');
      expect((await claim('newcomer', 4)).kind).toBe('ok');
    });

    it('a holder whose live lease another token owns under the same marker stops and makes the namespace settle', async () => {
      const a = await held('a', 1);
      // Rolled back to before the claim, then claimed by a waiting instance: the record names another owner.
      await redis.hset(scripts.keys.recordPrefix + a.id, 'token', 'waiting-instance');
      expect(
        await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry, knownRevs: [0], rev: 1 }),
      ).toMatchObject({ kind: 'lost', reason: 'rollback' });
      expect(await redis.hget(scripts.keys.meta, 'marker')).not.toBe(a.marker);
    });

    it('a resync from a stale node (REPLICAOF, then REPLICAOF NO ONE) changes the replication ID: a new marker', async () => {
      const stale = await RedisServer.start();
      try {
        const a = await held('a');
        await redis.call('REPLICAOF', '127.0.0.1', String(stale.port));
        await waitUntil(
          async () => /master_link_status:up/.test(await redis.info('replication')),
          10_000,
          'the link to the stale node',
        );
        await redis.call('REPLICAOF', 'NO', 'ONE');
        // The stale node's data replaced ours in the same process: the same run_id, another replication ID.
        const reply = await claim('waiting', 4);
        expect(reply.kind).toBe('settling');
        expect(reply.runId).toBe(a.runId);
        expect(reply.replId).not.toBe(a.replId);
      } finally {
        await redis.call('REPLICAOF', 'NO', 'ONE').catch(() => undefined);
        await stale.dispose();
      }
    });
  });

  describe('claims that arrive together', () => {
    /**
     * `claimants` claims in rounds, as instances booting at once make them: all first name the same guess; each
     * round, every claimant still without an ID claims again, one script after another, naming what its last reply
     * named, with a spread pick exactly when that reply was a `retry` (as the lease does). Returns the IDs taken and
     * the scripts run.
     */
    async function storm(idCount: number, claimants: number, seed: number) {
      const p = protocol(idCount);
      // A seeded stand-in for the lease's injected random source.
      const random = mulberry32(seed);
      let pending = Array.from({ length: claimants }, (_, i) => ({
        token: `storm-${i}`,
        candidate: 0,
        byReply: false,
      }));
      const ids: number[] = [];
      let scriptsRun = 0;
      while (pending.length > 0) {
        const next: typeof pending = [];
        for (const c of pending) {
          const spread = c.byReply ? Math.floor(random() * 2 ** 31) : undefined;
          const args = p.claimArgs({
            token: c.token,
            candidate: c.candidate,
            holderNowMs: Date.now(),
            host: 'h',
            pid: 1,
            excluded: [],
            ...(spread === undefined ? {} : { spread }),
          });
          const reply = LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, c.candidate, args));
          scriptsRun++;
          if (reply.kind === 'ok') ids.push(reply.id);
          else if (reply.kind === 'retry') next.push({ ...c, candidate: reply.candidate, byReply: true });
          else throw new Error(`unexpected ${JSON.stringify(reply)}`);
        }
        pending = next;
      }
      return { ids, scriptsRun };
    }

    /** A namespace of `idCount` IDs, every one used once and released: the cursor is spent, all have expired. */
    async function allReleased(idCount: number): Promise<void> {
      for (let i = 0; i < idCount; i++) {
        const reply = await held(`first-${i}`, idCount);
        expect((await release(reply.id, `first-${i}`, Date.now())).kind).toBe('released');
      }
    }

    // Contending for one ID after another takes claimants * (claimants + 1) / 2 scripts (820 for 40); sent to the same
    // ID and then spread at random, about 3.6 each. A burst's retry answers name distinct IDs: the first claim takes
    // the ID all of them guessed, every other one the ID its first answer named, with its second script.
    it.each([1, 2, 3])('over expired IDs: all distinct, two scripts each (seed %i)', async (seed) => {
      const claimants = 40;
      await allReleased(64);
      const { ids, scriptsRun } = await storm(64, claimants, seed);
      expect(new Set(ids).size).toBe(claimants);
      expect(scriptsRun).toBe(2 * claimants - 1);
      // The oldest expired IDs, in order: IDs 0 to 39 were released first.
      expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: claimants }, (_, i) => i));
    });

    it.each([1, 2, 3])('over never-used IDs at the cursor: all distinct, two scripts each (seed %i)', async (seed) => {
      const claimants = 40;
      const { ids, scriptsRun } = await storm(64, claimants, seed);
      expect(new Set(ids).size).toBe(claimants);
      expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: claimants }, (_, i) => i));
      expect(scriptsRun).toBe(2 * claimants - 1);
    });

    it('a burst of claims past the spread depth still ends with all distinct IDs', async () => {
      // 1,100 never-used IDs, 1,050 claims at once: the answers past the first 1,024 IDs at the cursor fall back to
      // the cursor's ID and contend, as before; nothing is handed out twice.
      const claimants = 1050;
      const { ids, scriptsRun } = await storm(1100, claimants, 4);
      expect(new Set(ids).size).toBe(claimants);
      expect(scriptsRun).toBeLessThan(3 * claimants);
    });

    it('a first guess that happens to be the ID a burst offers next takes it without moving the cursor past others', async () => {
      // Found by the simulator: after a full loss the cursor starts again at 0. A first answer offers 0; a second
      // claim's own first guess is 1, the next offer, and takes it. The cursor must stay at 0, or ID 0 is neither
      // never-used nor in the expiry set: lost to every claim.
      const p = protocol(3);
      const guess = (token: string, candidate: number) =>
        p.claimArgs({ token, candidate, holderNowMs: Date.now(), host: 'h', pid: 1, excluded: [] });
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 2, guess('a', 2)))).toMatchObject({
        kind: 'retry',
        candidate: 0,
      });
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 1, guess('b', 1)))).toMatchObject({
        kind: 'ok',
        id: 1,
      });
      expect((await redis.get(scripts.keys.cursor)) ?? '0').toBe('0');
      const taken = [await held('c', 3), await held('d', 3)].map((reply) => reply.id);
      expect(taken.sort()).toEqual([0, 2]);
    });

    it('a burst over expired IDs that expired in the same millisecond names each once, however claims interleave', async () => {
      const p = protocol(8);
      await allReleased(8);
      for (let id = 0; id < 8; id++) await redis.zadd(scripts.keys.expiry, 1, String(id));
      const claimArgs = (token: string, candidate: number, spread?: number) =>
        p.claimArgs({
          token,
          candidate,
          holderNowMs: Date.now(),
          host: 'h',
          pid: 1,
          excluded: [],
          ...(spread === undefined ? {} : { spread }),
        });
      const guess = async (token: string) =>
        LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 5, claimArgs(token, 5)));
      const take = async (token: string, id: number) =>
        LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, id, claimArgs(token, id, 0)));
      expect(await guess('a')).toMatchObject({ kind: 'retry', candidate: 0 });
      expect(await guess('b')).toMatchObject({ kind: 'retry', candidate: 1 });
      expect(await guess('c')).toMatchObject({ kind: 'retry', candidate: 2 });
      // The last one named is taken before the others: the next answer goes on after it, not back to the oldest.
      expect(await take('c', 2)).toMatchObject({ kind: 'ok', id: 2 });
      expect(await guess('d')).toMatchObject({ kind: 'retry', candidate: 3 });
      expect(await take('d', 3)).toMatchObject({ kind: 'ok', id: 3 });
      expect(await take('b', 1)).toMatchObject({ kind: 'ok', id: 1 });
      expect(await guess('e')).toMatchObject({ kind: 'retry', candidate: 4 });
      expect(await take('a', 0)).toMatchObject({ kind: 'ok', id: 0 });
      expect(await take('e', 4)).toMatchObject({ kind: 'ok', id: 4 });
    });

    it('claims one at a time, after a burst, get the natural ID again once the burst is a window old', async () => {
      const p = protocol(8);
      const guess = (token: string, candidate: number) =>
        p.claimArgs({ token, candidate, holderNowMs: Date.now(), host: 'h', pid: 1, excluded: [] });
      // Two answers in a burst: the second names the ID after the first one's.
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 5, guess('a', 5)))).toMatchObject({
        kind: 'retry',
        candidate: 0,
      });
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 5, guess('b', 5)))).toMatchObject({
        kind: 'retry',
        candidate: 1,
      });
      // The burst is over once no answer came for a window (1 s): the cursor's ID again.
      await redis.hset(scripts.keys.meta, 'offeredAt', Date.now() - 1001);
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 5, guess('c', 5)))).toMatchObject({
        kind: 'retry',
        candidate: 0,
      });
    });

    it('without a spread pick (a first guess, no contention) a claim keeps the order: the cursor, then the oldest', async () => {
      const p = protocol(4);
      const guess = (candidate: number) =>
        p.claimArgs({ token: 'a', candidate, holderNowMs: Date.now(), host: 'h', pid: 1, excluded: [] });
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 2, guess(2)))).toMatchObject({
        kind: 'retry',
        candidate: 0,
      });
      // Every ID used and released in order: 0 expired longest ago, and a guess of 3 is sent there.
      await allReleased(4);
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 3, guess(3)))).toMatchObject({
        kind: 'retry',
        candidate: 0,
      });
    });

    it('treats an ID taken past the cursor as used when the cursor reaches it: its record gone, the time rule holds', async () => {
      const p = protocol(4);
      // ID 2 taken past the cursor by a contended claim sent there, then released and its record lost.
      const args = p.claimArgs({
        token: 'x',
        candidate: 2,
        holderNowMs: Date.now(),
        host: 'h',
        pid: 1,
        excluded: [],
        spread: 0,
      });
      expect(LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, 2, args))).toMatchObject({
        kind: 'ok',
        id: 2,
      });
      expect(await redis.get(scripts.keys.cursor)).not.toBe('3');
      expect((await release(2, 'x', Date.now())).kind).toBe('released');
      await redis.del(scripts.keys.recordPrefix + '2');
      expect(await claim('a', 4)).toMatchObject({ kind: 'ok', id: 0 });
      expect(await claim('b', 4)).toMatchObject({ kind: 'ok', id: 1 });
      // The cursor is at 2 now: not handed out as never-used; its last holder may have issued until just now.
      const reply = await claim('c', 4);
      expect(reply.kind).toBe('wait');
    });
  });

  it('after a contract with fewer IDs, never hands out an ID beyond its count, nor names one in a retry', async () => {
    // Eight IDs under one contract, all used and released from 7 down to 0 (7 expired longest ago); then the
    // namespace takes a contract of four IDs, none being live. IDs 4 to 7 do not fit the new worker field.
    const claimed = async (token: string, idCount: number, config: string) => {
      const reply = await claim(token, idCount, { config });
      if (reply.kind !== 'ok') throw new Error(`claim by ${token}: ${JSON.stringify(reply)}`);
      return reply.id;
    };
    for (let id = 0; id < 8; id++) expect(await claimed(`w${id}`, 8, 'layout8')).toBe(id);
    for (let id = 7; id >= 0; id--) expect((await release(id, `w${id}`, Date.now())).kind).toBe('released');
    const taken = [];
    for (let i = 0; i < 4; i++) taken.push(await claimed(`n${i}`, 4, 'layout4'));
    expect(taken.sort()).toEqual([0, 1, 2, 3]);
    expect((await claim('n4', 4, { config: 'layout4' })).kind).toBe('exhausted');
  });

  it('passes over an excluded ID at the cursor, keeping it claimable later', async () => {
    expect(await claim('a', 2, { excluded: [0] })).toMatchObject({ kind: 'ok', id: 1 });
    expect(await redis.zscore(scripts.keys.expiry, '0')).toBe('0');
    expect(await claim('b', 2)).toMatchObject({ kind: 'ok', id: 0 });
  });
});
