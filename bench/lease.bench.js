/**
 * The lease's costs: claim latency with few and with many held leases, bootstrap time over a bare Nest app, and local
 * generation against one Redis round trip per ID (a Lua-in-Redis generator, the approach of
 * hengyunabc/redis-id-generator, about 30,000 IDs/s per Redis node by its own figures).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { performance } from 'node:perf_hooks';
import { SnowflakeGenerator, SnowflakeModule, resolveLayout } from '../dist/index.js';
import { CLAIM_SCRIPT, RELEASE_SCRIPT } from '../dist/lease/lease.scripts.js';
import { startRedis } from './redis-process.js';
import { median } from './harness.js';

const CLAIMS = 2000;
/** Requests outstanding at once against the round-trip generator: serial, and as a busy service would pipeline them. */
const IN_FLIGHT = [1, 16, 64];
const BOOTS = 15;

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * A namespace whose `held` IDs all hold live leases and whose free IDs expired long ago, as after a long run. Its
 * marker names this Redis process and settled long ago, as it would have after the first claims.
 */
async function seedNamespace(redis, ns, held, free) {
  const base = `snowflake:{${ns}}:`;
  const future = Date.now() + 3_600_000;
  const server = /run_id:(\w+)/.exec(await redis.info('server'))[1];
  await redis.hset(`${base}meta`, 'marker', 'bench', 'created', 0, 'settleMs', 0, 'server', server);
  await redis.set(`${base}cursor`, held + free);
  for (let start = 0; start < held; start += 5000) {
    const pipeline = redis.pipeline();
    for (let id = start; id < Math.min(held, start + 5000); id++) {
      pipeline.zadd(`${base}expiry`, future, id);
      pipeline.hset(`${base}w:${id}`, 'token', `t${id}`, 'ceiling', 0);
    }
    await pipeline.exec();
  }
  for (let id = held; id < held + free; id++) await redis.zadd(`${base}expiry`, 1, id);
  return base;
}

/**
 * Claim latency: claim the oldest expired ID, give it back, repeat. Each claim is one EVALSHA round trip. The cursor
 * stands at the end of the ID space, as in a namespace that has handed out every ID once, so every claim takes the
 * sorted-set path (the oldest expired lease) rather than the cheaper never-used one.
 */
async function claimLatency(redis, held) {
  const ns = `bench-${held}`;
  const free = 16;
  const idCount = 2 ** 17;
  const base = await seedNamespace(redis, ns, held, free);
  await redis.set(`${base}cursor`, idCount);
  const samples = [];
  for (let i = 0; i < CLAIMS + 200; i++) {
    const token = `c${i}`;
    const start = performance.now();
    const reply = await redis.snowflakeClaim(
      `${base}meta`,
      `${base}cursor`,
      `${base}expiry`,
      `${base}w:`,
      token,
      10_000,
      idCount,
      Date.now(),
      'bench',
      process.pid,
      '',
      'bench',
    );
    const elapsed = performance.now() - start;
    if (reply[0] !== 'ok') throw new Error(`claim failed: ${reply}`);
    if (reply[1] < held) throw new Error(`claim ${i} took held ID ${reply[1]}`);
    if (i >= 200) samples.push(elapsed);
    await redis.snowflakeRelease(`${base}expiry`, `${base}w:${reply[1]}`, reply[1], token, Date.now());
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function bootTime(options) {
  class Bare {}
  Module({})(Bare);
  const times = [];
  for (let i = 0; i < BOOTS; i++) {
    const imports = options === undefined ? [] : [SnowflakeModule.forRoot(options(i))];
    class App {}
    Module({ imports })(App);
    const start = performance.now();
    const app = await NestFactory.createApplicationContext(options === undefined ? Bare : App, { logger: false });
    times.push(performance.now() - start);
    await app.close();
  }
  return median(times.slice(2));
}

/** One Redis round trip per ID: time and sequence computed by a Lua script in Redis. */
const LUA_GENERATOR = `
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seq = redis.call('INCR', KEYS[1])
if seq >= 4096 then redis.call('SET', KEYS[1], 0) seq = 0 end
return {ms, seq}
`;

/** IDs per second from the Lua generator with `inFlight` requests outstanding at any time (1: strictly serial). */
async function roundTripRate(redis, windowMs, inFlight) {
  const end = performance.now() + windowMs;
  let n = 0;
  const start = performance.now();
  const caller = async () => {
    while (performance.now() < end) {
      await redis.benchNextId('bench:seq');
      n++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, caller));
  return (n * 1000) / (performance.now() - start);
}

function localRate(windowMs) {
  const generator = new SnowflakeGenerator({ layout: resolveLayout({ preset: 'twitter' }), workerId: 1 });
  const end = performance.now() + windowMs;
  let n = 0;
  const start = performance.now();
  while (performance.now() < end) {
    for (let i = 0; i < 256; i++) generator.next();
    n += 256;
  }
  return (n * 1000) / (performance.now() - start);
}

export default {
  name: 'lease',
  title: 'Redis lease',
  async run({ settings, log }) {
    const server = await startRedis();
    try {
      const redis = server.client;
      redis.defineCommand('snowflakeClaim', { numberOfKeys: 3, lua: CLAIM_SCRIPT });
      redis.defineCommand('snowflakeRelease', { numberOfKeys: 1, lua: RELEASE_SCRIPT });

      log('  claim latency, warm-up');
      await claimLatency(redis, 15);
      log('  claim latency, 16 held leases');
      const small = await claimLatency(redis, 16);
      log('  claim latency, 65,536 held leases');
      const large = await claimLatency(redis, 65_536);

      log('  bootstrap time');
      const bare = await bootTime(undefined);
      const staticBoot = await bootTime(() => ({ workerId: 1 }));
      // A settled namespace, as in a running deployment: the first-use settling wait is not part of a boot.
      await seedNamespace(redis, 'boot', 0, 0);
      const leaseBoot = await bootTime(() => ({
        layout: { workerBits: 10 },
        redis: { url: server.url, namespace: 'boot' },
      }));

      log('  local generation against a Redis round trip per ID');
      redis.defineCommand('benchNextId', { numberOfKeys: 1, lua: LUA_GENERATOR });
      const remote = {};
      for (const inFlight of IN_FLIGHT) {
        remote[inFlight] = median([
          await roundTripRate(redis, settings.windowMs / 2, inFlight),
          await roundTripRate(redis, settings.windowMs / 2, inFlight),
        ]);
      }
      const fastestRemote = Math.max(...Object.values(remote));
      const local = median([localRate(settings.windowMs / 2), localRate(settings.windowMs / 2)]);

      const fmt = (ms) => `${ms.toFixed(3)} ms`;
      const sections = [
        [
          `Claim: one EVALSHA round trip on loopback, ${CLAIMS} claims each (claim the oldest expired ID, release, repeat; ` +
            'the never-used cursor is spent, so every claim searches the sorted set of expiries). ' +
            'The worker field is 17 bits wide here: 65,536 held leases fill a 16-bit field, leaving nothing to claim, ' +
            'so 16 free IDs are added beside them.',
          '',
          '| held leases | p50 | p99 |',
          '| --: | --: | --: |',
          `| 16 | ${fmt(small.p50)} | ${fmt(small.p99)} |`,
          `| 65,536 | ${fmt(large.p50)} | ${fmt(large.p99)} |`,
        ].join('\n'),
        [
          `Bootstrap (median of ${BOOTS - 2} application contexts):`,
          '',
          '| app | boot | over bare |',
          '| :-- | --: | --: |',
          `| bare Nest app | ${fmt(bare)} | |`,
          `| + SnowflakeModule, static worker ID | ${fmt(staticBoot)} | +${fmt(staticBoot - bare)} |`,
          `| + SnowflakeModule, Redis lease (connect + claim) | ${fmt(leaseBoot)} | +${fmt(leaseBoot - bare)} |`,
        ].join('\n'),
        [
          'Local generation against one Redis round trip per ID (a Lua script computes time and sequence in Redis), ' +
            'with 1, 16 and 64 requests in flight from one client; the ratio is local over each.',
          '',
          '| generator | IDs/s | local / this |',
          '| :-- | --: | --: |',
          `| local \`next()\` (twitter layout, capped at 4,096,000/s) | ${Math.round(local).toLocaleString('en-US')} | 1× |`,
          ...IN_FLIGHT.map(
            (inFlight) =>
              `| one Redis round trip per ID, ${inFlight} in flight | ${Math.round(remote[inFlight]).toLocaleString('en-US')} | ${(local / remote[inFlight]).toFixed(0)}× |`,
          ),
        ].join('\n'),
      ];
      const targets = [
        { name: 'claim p99, 65,536 held leases', measured: fmt(large.p99), goal: '< 2 ms', pass: large.p99 < 2 },
        {
          name: 'claim p99 at 65,536 / at 16 held',
          measured: `${(large.p99 / small.p99).toFixed(2)}×`,
          goal: '≤ 2×',
          pass: large.p99 <= 2 * small.p99,
        },
        {
          name: 'local generation / round trip per ID, serial',
          measured: `${(local / remote[1]).toFixed(0)}×`,
          goal: '≥ 100×',
          pass: local / remote[1] >= 100,
        },
        {
          name: 'local generation / round trip per ID, fastest of 1, 16, 64 in flight',
          measured: `${(local / fastestRemote).toFixed(0)}×`,
          goal: '≥ 100×',
          pass: local / fastestRemote >= 100,
        },
      ];
      return { sections, targets };
    } finally {
      await server.stop();
    }
  },
};
