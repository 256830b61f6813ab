import { Redis } from 'ioredis';
import { resolveLayout, type LayoutOptions } from '../../lib/core/layout.js';
import { contractOf, LAYOUT_CHANGE_MAX_WAIT_MS, SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { LeaseProtocol } from '../../lib/lease/redis/lease.protocol.js';
import { CLAIM_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import { LeaseScripts } from '../support/lease-scripts.js';
import { RedisServer } from '../support/redis-server.js';

/**
 * A namespace that takes another layout once no lease is live (real redis-server, the claim script one call at a
 * time). The floor and the time rule compare timestamps in one layout's frame; across two layouts an epoch moved
 * later, a coarser unit or fewer bits below the timestamp would issue IDs among those already issued, on any worker
 * ID. The claim waits until the new layout's IDs lie above every old one, and refuses when that is far away.
 */
describe('a namespace taking another layout (real redis-server)', () => {
  let server: RedisServer;
  let redis: Redis;
  let scripts: LeaseScripts;
  let n = 0;
  const TTL = 1000;
  const BOUND_MS = 100;
  const MARGIN = 200;
  const numbers = { ttlMs: TTL, fenceMarginMs: MARGIN, clockBackToleranceMs: 50, maxClockOffsetMs: BOUND_MS };
  const NOW = Date.now();
  const FLEET_LAYOUT = resolveLayout({ workerBits: 2 }, NOW);
  const contract = (options: LayoutOptions = {}) =>
    contractOf(numbers, resolveLayout({ workerBits: 2, ...options }, NOW));
  const FLEET = contract();

  const protocol = (config: string, fenceMarginMs = MARGIN) =>
    scripts.protocol({ ttlMs: TTL, config, idCount: 4, fenceMarginMs });

  async function claim(token: string, config: string, { candidate = 0, once = false, marginMs = MARGIN } = {}) {
    const p = protocol(config, marginMs);
    for (;;) {
      const request = { token, holderNowMs: Date.now(), host: 'test-host', pid: 1, excluded: [], candidate };
      const reply = LeaseProtocol.decodeClaim(await scripts.run(CLAIM_SCRIPT, p, candidate, p.claimArgs(request)));
      if (reply.kind !== 'retry' || once) return reply;
      candidate = reply.candidate;
    }
  }

  /** A lease taken under `config` and released at once, its last timestamp now: the namespace is free. */
  async function usedAndLeft(config: string): Promise<void> {
    const reply = await claim('old', config);
    if (reply.kind !== 'ok') throw new Error(`claim: ${JSON.stringify(reply)}`);
    const p = protocol(config);
    const released = LeaseProtocol.decodeRelease(
      await scripts.run(RELEASE_SCRIPT, p, reply.id, p.releaseArgs(reply.id, 'old', Date.now(), 'fresh')),
    );
    expect(released.kind).toBe('released');
  }

  const recorded = () => redis.hget(scripts.keys.meta, 'config');

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
  });

  afterAll(async () => {
    redis.disconnect();
    await server.dispose();
  });

  beforeEach(async () => {
    scripts = new LeaseScripts(redis, `layout${++n}`);
    expect((await claim('first', FLEET)).kind).toBe('settling');
    await redis.hset(scripts.keys.meta, 'created', Date.now() - SETTLE_AFTER_LOSS_MS - 10);
  });

  it.each([
    ['an epoch 60 s later', { epoch: FLEET_LAYOUT.epoch + 60_000 }, 60_000],
    ['a coarser time unit', { timeUnitMs: 10 as const }, 24 * 3600_000],
    ['one bit fewer below the timestamp', { timestampBits: 42, sequenceBits: 11 }, 24 * 3600_000],
  ])('refuses %s, whose IDs lie among those issued, naming how long they would', async (_, options, atLeastMs) => {
    await usedAndLeft(FLEET);
    const reply = await claim('new', contract(options));
    expect(reply).toMatchObject({ kind: 'layout', recorded: FLEET });
    if (reply.kind !== 'layout') return;
    expect(reply.waitMs).toBeGreaterThan(atLeastMs);
    expect(await recorded()).toBe(FLEET);
  });

  it.each([
    ['an epoch 60 s earlier', { epoch: FLEET_LAYOUT.epoch - 60_000 }],
    ['a shard field below the timestamp (IDs four times higher)', { shardBits: 2 }],
  ])('takes %s at once: its IDs lie above every old one', async (_, options) => {
    await usedAndLeft(FLEET);
    const config = contract(options);
    expect(await claim('new', config)).toMatchObject({ kind: 'ok' });
    expect(await recorded()).toBe(config);
  });

  it('takes other worker and sequence fields once the old timestamps are passed, a few clock bounds on', async () => {
    await usedAndLeft(FLEET);
    const config = contract({ workerBits: 3, sequenceBits: 11 });
    const reply = await claim('new', config);
    expect(reply.kind).toBe('layout');
    if (reply.kind !== 'layout') return;
    // The old contract's fence margin, two clock bounds of the new one, the spare second and a time unit, from the
    // release (just now).
    expect(reply.waitMs).toBeGreaterThan(MARGIN + 2 * BOUND_MS + 1000 - 50);
    expect(reply.waitMs).toBeLessThanOrEqual(MARGIN + 2 * BOUND_MS + 1000 + 2);
    expect(await recorded()).toBe(FLEET);
    await new Promise((resolve) => setTimeout(resolve, reply.waitMs + 5));
    expect(await claim('new', config)).toMatchObject({ kind: 'ok' });
    expect(await recorded()).toBe(config);
  });

  it('going back after a layout whose IDs lay above waits until the old layout passes them, or refuses', async () => {
    const earlier = contract({ epoch: FLEET_LAYOUT.epoch - 60_000 });
    await usedAndLeft(FLEET);
    await usedAndLeft(earlier);
    const back = await claim('back', FLEET);
    expect(back).toMatchObject({ kind: 'layout', recorded: earlier });
    if (back.kind === 'layout') expect(back.waitMs).toBeGreaterThan(60_000);
    // A step back of a few seconds is waited for, not refused.
    const near = contract({ epoch: FLEET_LAYOUT.epoch - 60_000 + 5_000 });
    const reply = await claim('near', near);
    expect(reply.kind).toBe('layout');
    if (reply.kind === 'layout') {
      expect(reply.waitMs).toBeGreaterThan(5_000);
      expect(reply.waitMs).toBeLessThanOrEqual(LAYOUT_CHANGE_MAX_WAIT_MS);
    }
  });

  it('never waits for contracts it cannot read, nor for a change of TTL alone', async () => {
    await usedAndLeft(FLEET);
    const ttlOnly = contractOf({ ...numbers, ttlMs: 2000, fenceMarginMs: 400 }, FLEET_LAYOUT);
    // Taken at once (usedAndLeft throws on any other answer), and left again.
    await usedAndLeft(ttlOnly);
    expect(await recorded()).toBe(ttlOnly);
    await redis.hset(scripts.keys.meta, 'config', 'made-up');
    expect(await claim('other', FLEET)).toMatchObject({ kind: 'ok' });
    expect(await recorded()).toBe(FLEET);
  });

  it("hands out a released ID whose record is gone only once the old contract's margin has passed, too", async () => {
    // A fleet with wide clock numbers used every ID and stopped gracefully: each release set the expiry to that
    // moment, giving up the margin a lapse leaves, while the holder's timestamps ran up to its clock bound and
    // clock-back tolerance ahead of the server. Then the free records were evicted.
    const wide = contractOf(
      { ttlMs: TTL, fenceMarginMs: 3_000, clockBackToleranceMs: 1_000, maxClockOffsetMs: 996 },
      FLEET_LAYOUT,
    );
    for (let i = 0; i < 4; i++) await usedAndLeft(wide);
    await redis.del([0, 1, 2, 3].map((id) => `${scripts.keys.recordPrefix}${id}`));
    // The same layout with narrow clock numbers takes the namespace at once; its own margin (60 ms) after the release
    // would not cover the old holders' lead, so the time rule waits for the old margin as well.
    const narrow = contractOf(
      { ttlMs: TTL, fenceMarginMs: 60, clockBackToleranceMs: 10, maxClockOffsetMs: 20 },
      FLEET_LAYOUT,
    );
    const reply = await claim('narrow', narrow, { marginMs: 60 });
    expect(reply.kind).toBe('wait');
    if (reply.kind === 'wait') expect(reply.waitMs).toBeGreaterThan(3_000 + 60 - 50);
    expect(await recorded()).toBe(narrow);
  });

  it("counts the old contract's fence margin, which covers its clock bound and its clock-back tolerance", async () => {
    const wide = contractOf(
      { ttlMs: 10_000, fenceMarginMs: 5_000, clockBackToleranceMs: 4_000, maxClockOffsetMs: 496 },
      FLEET_LAYOUT,
    );
    await usedAndLeft(wide);
    const reply = await claim('new', contract({ workerBits: 3, sequenceBits: 11 }));
    expect(reply.kind).toBe('layout');
    // Its holders' timestamps ran up to 496 + 4,000 ms ahead of their server, itself up to 496 ms from this one.
    if (reply.kind === 'layout') expect(reply.waitMs).toBeGreaterThan(5_000 + 2 * BOUND_MS + 1000 - 50);
  });

  it('a contract recorded by a claim that handed nothing out still bounds the next layout change', async () => {
    await usedAndLeft(FLEET);
    // The old lease ended 7 s ago: an epoch 5 s later is allowed now (5 s, its margin, two bounds, a second).
    const ago = Date.now() - 7_000;
    await redis.zadd(scripts.keys.expiry, ago, '0');
    await redis.hset(scripts.keys.meta, 'configAt', ago, 'created', ago - SETTLE_AFTER_LOSS_MS);
    const later = contract({ epoch: FLEET_LAYOUT.epoch + 5_000 });
    // Its claim records its contract and answers `retry` (it named an ID other than the one to hand out); it dies.
    expect(await claim('later', later, { candidate: 3, once: true })).toMatchObject({ kind: 'retry' });
    expect(await recorded()).toBe(later);
    // An epoch 9 s later lies 4 s below that contract from the moment it was recorded, whoever issued under it.
    const reply = await claim('later-still', contract({ epoch: FLEET_LAYOUT.epoch + 9_000 }));
    expect(reply.kind).toBe('layout');
    if (reply.kind === 'layout') expect(reply.waitMs).toBeGreaterThan(4_000);
  });

  it('a holder whose lease lapsed gets nothing held back under another layout, nor records it, after a loss', async () => {
    // The fleet holds ID 0 and is paused past its lease; a layout whose IDs lie above takes the namespace, issues,
    // and leaves.
    const fleet = await claim('fleet', FLEET);
    if (fleet.kind !== 'ok') throw new Error(JSON.stringify(fleet));
    await redis.zadd(scripts.keys.expiry, Date.now() - 60_000, '0');
    const earlier = contract({ epoch: FLEET_LAYOUT.epoch - 3600_000 });
    await usedAndLeft(earlier);
    // A failover: the meta survives, another Redis process serves the namespace, which settles again.
    await redis.hset(scripts.keys.meta, 'server', 'another-process');
    const p = protocol(FLEET);
    const renewal = LeaseProtocol.decodeRenew(
      await scripts.run(
        RENEW_SCRIPT,
        p,
        fleet.id,
        p.renewArgs(
          {
            id: fleet.id,
            token: 'fleet',
            marker: fleet.marker,
            ceilingMs: Date.now(),
            previousExpiry: fleet.expiry,
            marginMs: MARGIN,
            knownRevs: [0],
            rev: 1,
          },
          'fresh',
        ),
      ),
    );
    expect(renewal).toMatchObject({ kind: 'lost' });
    expect(await redis.hget(scripts.keys.meta, 'reserved')).toBeNull();
    expect(await recorded()).toBe(earlier);
    await redis.hset(scripts.keys.meta, 'created', Date.now() - SETTLE_AFTER_LOSS_MS - 10);
    expect(await claim('fleet-again', FLEET)).toMatchObject({ kind: 'layout', recorded: earlier });
  });
});
