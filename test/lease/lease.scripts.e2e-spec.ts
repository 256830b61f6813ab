import { Redis } from 'ioredis';
import { LeaseProtocol, type RenewRequest } from '../../lib/lease/lease.protocol.js';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/lease.scripts.js';
import { RedisServer } from '../support/redis-server.js';

/**
 * The lease scripts one call at a time against a real redis-server, for the cases the module's own flow reaches
 * only through rare interleavings or operator actions: a lost holder's note meeting the current holder's release,
 * keys deleted while others survive, and a holder taking its ID back after Redis lost its data.
 */
describe('lease scripts (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;
  let n = 0;
  let tag: string;
  const TTL = 1000;
  const CONFIG = 'ttlMs=1000 layout=test';

  const keys = () => ({
    meta: `snowflake:{${tag}}:meta`,
    cursor: `snowflake:{${tag}}:cursor`,
    expiry: `snowflake:{${tag}}:expiry`,
    recordPrefix: `snowflake:{${tag}}:w:`,
  });
  const protocol = (idCount: number, config = CONFIG, ttlMs = TTL) =>
    new LeaseProtocol(keys(), { ttlMs, config, idCount });
  const evalScript = async (lua: string, p: LeaseProtocol, args: (string | number)[]) =>
    (await redis.eval(lua, 3, ...p.scriptKeys, ...args)) as unknown[];

  async function claim(token: string, idCount: number, { excluded = [] as number[], config = CONFIG, ttl = TTL } = {}) {
    const p = protocol(idCount, config, ttl);
    const args = p.claimArgs({ token, holderNowMs: Date.now(), host: 'test-host', pid: 1, excluded });
    return LeaseProtocol.decodeClaim(await evalScript(CLAIM_SCRIPT, p, args));
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
  ) {
    const p = protocol(4, config);
    const full: RenewRequest = {
      ceilingMs: Date.now() + TTL,
      previousExpiry: 0,
      marginMs: 200,
      ...request,
    };
    return LeaseProtocol.decodeRenew(await evalScript(RENEW_SCRIPT, p, p.renewArgs(full, `fresh-${Math.random()}`)));
  }

  const release = async (id: number, token: string, lastMs: number) =>
    LeaseProtocol.decodeRelease(
      await evalScript(RELEASE_SCRIPT, protocol(4), protocol(4).releaseArgs(id, token, lastMs, 'fresh')),
    );

  const note = async (id: number, lastMs: number) =>
    LeaseProtocol.decodeNote(await evalScript(NOTE_SCRIPT, protocol(4), protocol(4).noteArgs(id, lastMs, 'fresh')));

  /** Ends the namespace's settling by backdating its marker. */
  const settle = async () => redis.hset(keys().meta, 'created', Date.now() - 10 * TTL);

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
    tag = `scripts${++n}`;
    await settledNamespace();
  });

  it('ends every reply with the server time and the Redis process run_id', async () => {
    const before = Date.now();
    const reply = await held('a');
    const info = await redis.info('server');
    expect(reply.runId).toBe(/run_id:(\w+)/.exec(info)![1]);
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
    expect(Number(await redis.hget(keys().recordPrefix + '0', 'ceiling'))).toBe(now);

    // The next holder's floor is still the note, not the release's lower ceiling.
    const next = await held('next', 1);
    expect([next.id, next.floorMs]).toEqual([0, now + 5000]);
  });

  describe('a partial loss (keys deleted while the meta survived) is a loss, never "free"', () => {
    const cases: [string, () => Promise<unknown>][] = [
      ['the cursor', () => redis.del(keys().cursor)],
      ['the expiry set', () => redis.del(keys().expiry)],
      ['one member of the expiry set', () => redis.zrem(keys().expiry, '1')],
      ['the meta', () => redis.del(keys().meta)],
    ];
    it.each(cases)('deleting %s makes the namespace settle instead of handing out a held ID', async (_, lose) => {
      const a = await held('a');
      await held('b');
      await lose();
      const after = await claim('c', 4);
      expect(after.kind).toBe('settling');
      expect(await redis.hget(keys().meta, 'marker')).not.toBe(a.marker);
      // The holders see the new marker at their next renewal: without proof of a live lease they have lost it.
      expect(await renew({ id: a.id, token: 'a', marker: a.marker })).toMatchObject({ kind: 'lost', reason: 'marker' });
    });

    it('deleting the record of an expired ID makes the namespace settle when a claim meets it', async () => {
      const a = await held('a', 1);
      await release(a.id, 'a', Date.now() + 3000);
      await redis.del(keys().recordPrefix + '0');
      // The only candidate lost its floor (the last timestamp written on release): never handed out as free.
      expect((await claim('b', 1)).kind).toBe('settling');
      expect(await redis.hget(keys().meta, 'marker')).not.toBe(a.marker);
    });

    it("deleting a live holder's record makes the namespace settle; the holder takes its ID back at once", async () => {
      const a = await held('a');
      const b = await held('b');
      await redis.del(keys().recordPrefix + a.id);
      const renewal = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry });
      expect(renewal.kind).toBe('recovered');
      expect(await redis.hget(keys().recordPrefix + a.id, 'token')).toBe('a');
      // Everyone else settles: no claim succeeds until the earlier holders have renewed or fenced.
      expect((await claim('c', 4)).kind).toBe('settling');
      expect((await renew({ id: b.id, token: 'b', marker: b.marker, previousExpiry: b.expiry })).kind).toBe(
        'recovered',
      );
    });

    it('a namespace whose keys all survived passes the check on every script', async () => {
      const a = await held('a');
      await note(3, Date.now());
      await release(a.id, 'a', Date.now());
      await held('b');
      const marker = await redis.hget(keys().meta, 'marker');
      expect((await claim('c', 4)).kind).toBe('ok');
      expect(await redis.hget(keys().meta, 'marker')).toBe(marker);
    });
  });

  describe('taking an ID back after a data loss', () => {
    it('restores the ID with the higher of the surviving and the requested ceiling, under the new marker', async () => {
      const a = await held('a');
      await redis.flushall();
      const ceilingMs = Date.now() + 7000;
      const reply = await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry, ceilingMs });
      expect(reply.kind).toBe('recovered');
      const record = await redis.hgetall(keys().recordPrefix + a.id);
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
      expect(
        await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: Date.now() + 60_000 }),
      ).toMatchObject({ kind: 'lost', reason: 'marker' });
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
        const full = { ceilingMs: Date.now(), marginMs: 200, ...request };
        const reply = LeaseProtocol.decodeRenew(await evalScript(RENEW_SCRIPT, p, p.renewArgs(full, 'fresh')));
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
    const { meta } = keys();
    const other = { config: 'ttlMs=2000 layout=test', ttl: 2000 };
    expect(await claim('b', 4, other)).toMatchObject({ kind: 'mismatch', recorded: CONFIG, live: 1 });
    expect(await redis.hget(meta, 'config')).toBe(CONFIG);

    await release(a.id, 'a', now);
    expect((await claim('b', 4, other)).kind).toBe('ok');
    expect(await redis.hget(meta, 'config')).toBe(other.config);
    expect(await redis.hget(meta, 'settleMs')).toBe('2000');
  });

  it('keeps the configuration and the longer settling time of a meta that survived a restart', async () => {
    const a = await held('a');
    const { meta } = keys();
    await redis.hset(meta, 'settleMs', 5000);
    // As after a restart with persistence: the meta names another Redis process.
    await redis.hset(meta, 'server', 'an-earlier-process');
    const other = { config: 'ttlMs=500 layout=test', ttl: 500 };
    expect(await claim('b', 4, other)).toMatchObject({ kind: 'mismatch', recorded: CONFIG, live: 1 });
    expect(await redis.hget(meta, 'config')).toBe(CONFIG);
    expect(await redis.hget(meta, 'settleMs')).toBe('5000');
    expect(await redis.hget(meta, 'marker')).not.toBe(a.marker);
    // The holder from before the restart sees the new marker at its next renewal, and takes its ID back with proof.
    expect(await renew({ id: a.id, token: 'a', marker: a.marker })).toMatchObject({ kind: 'lost', reason: 'marker' });
    expect((await renew({ id: a.id, token: 'a', marker: a.marker, previousExpiry: a.expiry })).kind).toBe('recovered');
  });

  it('tells a holder that the namespace took another configuration while it was paused that it lost its lease', async () => {
    const a = await held('a');
    expect((await renew({ id: a.id, token: 'a', marker: a.marker })).kind).toBe('ok');
    await redis.hset(keys().meta, 'config', 'ttlMs=2000 layout=test');
    expect(await renew({ id: a.id, token: 'a', marker: a.marker })).toMatchObject({ kind: 'lost', reason: 'config' });
  });

  it('passes over an excluded ID at the cursor, keeping it claimable later', async () => {
    expect(await claim('a', 2, { excluded: [0] })).toMatchObject({ kind: 'ok', id: 1 });
    expect(await redis.zscore(keys().expiry, '0')).toBe('0');
    expect(await claim('b', 2)).toMatchObject({ kind: 'ok', id: 0 });
  });
});
