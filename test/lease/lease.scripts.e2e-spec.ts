import { Redis } from 'ioredis';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/lease.scripts.js';
import { RedisServer } from '../support/redis-server.js';

/**
 * The lease scripts one call at a time against a real redis-server, for the cases the module's own flow reaches
 * only through rare interleavings: a lost holder's note meeting the current holder's release, and a cursor that
 * Redis forgot while leases were live.
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
    prefix: `snowflake:{${tag}}:w:`,
  });

  async function claim(
    token: string,
    idCount: number,
    { excluded = '', config = CONFIG, ttl = TTL } = {},
  ): Promise<unknown[]> {
    const { meta, cursor, expiry, prefix } = keys();
    return (await redis.eval(
      CLAIM_SCRIPT,
      3,
      meta,
      cursor,
      expiry,
      prefix,
      token,
      ttl,
      idCount,
      Date.now(),
      'test-host',
      1,
      excluded,
      config,
    )) as unknown[];
  }

  /** RENEW by `token` of ID `id` under `marker`, with this configuration. */
  async function renew(id: number, token: string, marker: unknown, config = CONFIG): Promise<unknown[]> {
    const { meta, expiry, prefix } = keys();
    return (await redis.eval(
      RENEW_SCRIPT,
      2,
      meta,
      expiry,
      prefix + id,
      id,
      token,
      TTL,
      Date.now() + TTL,
      String(marker),
      config,
    )) as unknown[];
  }

  const release = async (id: number, token: string, lastMs: number) =>
    (await redis.eval(RELEASE_SCRIPT, 1, keys().expiry, keys().prefix + id, id, token, lastMs)) as unknown[];

  const note = async (id: number, lastMs: number) =>
    redis.eval(NOTE_SCRIPT, 1, keys().expiry, keys().prefix + id, id, lastMs);

  /** A namespace past its first-use settling: the marker is backdated by one TTL. */
  async function settledNamespace(): Promise<void> {
    expect((await claim('first', 0))[0]).toBe('settling');
    await redis.hset(keys().meta, 'created', Date.now() - 2 * TTL);
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

  it("keeps a lost holder's note when the current holder releases with a lower last timestamp", async () => {
    const now = Date.now();
    const [status, id] = await claim('current', 1);
    expect([status, id]).toEqual(['ok', 0]);
    // A holder that lost ID 0 while its clock ran 5 s ahead leaves a note of its last timestamp.
    await note(0, now + 5000);
    // The current holder releases with its own exact last timestamp, lower than the note.
    expect((await release(0, 'current', now))[0]).toBe('released');
    expect(Number(await redis.hget(keys().prefix + '0', 'ceiling'))).toBe(now);

    // The next holder's floor is still the note, not the release's lower ceiling.
    const [next, nextId, floor] = await claim('next', 1);
    expect([next, nextId]).toEqual(['ok', 0]);
    expect(floor).toBe(now + 5000);
  });

  it('passes over a never-used ID that already has a live lease (a cursor Redis forgot)', async () => {
    expect((await claim('a', 4)).slice(0, 2)).toEqual(['ok', 0]);
    expect((await claim('b', 4)).slice(0, 2)).toEqual(['ok', 1]);
    await redis.del(keys().cursor);
    const [status, id] = await claim('c', 4);
    expect(status).toBe('ok');
    expect(id).toBe(2);
    expect(await redis.hget(keys().prefix + '0', 'token')).toBe('a');
  });

  it('refuses a claim under another configuration while a lease is live, and takes it once none is', async () => {
    const now = Date.now();
    expect((await claim('a', 4))[0]).toBe('ok');
    const { meta } = keys();
    const other = { config: 'ttlMs=2000 layout=test', ttl: 2000 };
    expect((await claim('b', 4, other)).slice(0, 3)).toEqual(['mismatch', CONFIG, 1]);
    expect(await redis.hget(meta, 'config')).toBe(CONFIG);

    await release(0, 'a', now);
    expect((await claim('b', 4, other))[0]).toBe('ok');
    expect(await redis.hget(meta, 'config')).toBe(other.config);
    expect(await redis.hget(meta, 'settleMs')).toBe('2000');
  });

  it('keeps the configuration and the longer settling time of a meta that survived a restart', async () => {
    const [, , , , marker] = await claim('a', 4);
    const { meta } = keys();
    await redis.hset(meta, 'settleMs', 5000);
    // As after a restart with persistence: the meta names another Redis process.
    await redis.hset(meta, 'server', 'an-earlier-process');
    const other = { config: 'ttlMs=500 layout=test', ttl: 500 };
    expect((await claim('b', 4, other)).slice(0, 3)).toEqual(['mismatch', CONFIG, 1]);
    expect(await redis.hget(meta, 'config')).toBe(CONFIG);
    expect(await redis.hget(meta, 'settleMs')).toBe('5000');
    expect(await redis.hget(meta, 'marker')).not.toBe(marker);
    // The holder from before the restart sees the new marker at its next renewal.
    expect((await renew(0, 'a', marker)).slice(0, 2)).toEqual(['lost', 'marker']);
  });

  it('tells a holder that the namespace took another configuration while it was paused that it lost its lease', async () => {
    const [, id, , , marker] = await claim('a', 4);
    expect((await renew(Number(id), 'a', marker))[0]).toBe('ok');
    await redis.hset(keys().meta, 'config', 'ttlMs=2000 layout=test');
    expect((await renew(Number(id), 'a', marker)).slice(0, 2)).toEqual(['lost', 'config']);
  });

  it('answers busy, not exhausted, when live leases fill the passed-over cursor range but never-used IDs remain', async () => {
    for (let i = 0; i < 18; i++) expect((await claim(`t${i}`, 40)).slice(0, 2)).toEqual(['ok', i]);
    await redis.del(keys().cursor);
    expect((await claim('late', 40))[0]).toBe('busy');
    expect((await claim('late', 40)).slice(0, 2)).toEqual(['ok', 18]);
  });

  it('passes over an excluded ID at the cursor too', async () => {
    expect((await claim('a', 4, { excluded: '0' })).slice(0, 2)).toEqual(['ok', 1]);
  });
});
