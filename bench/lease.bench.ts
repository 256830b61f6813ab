/**
 * The lease's costs: claim latency with few and with many held leases, bootstrap time over a bare Nest app, and local
 * generation against one Redis round trip per ID (a Lua-in-Redis generator, the approach of
 * hengyunabc/redis-id-generator, about 30,000 IDs/s per Redis node by its own figures).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import {
  IdService,
  SnowflakeGenerator,
  SnowflakeModule,
  resolveLayout,
  type LayoutOptions,
  type LayoutPresetName,
  type SnowflakeModuleOptions,
} from 'nestjs-snowflake';
// Internal, on purpose: the claim latency is measured on the lease's own scripts and key names, below the module.
import { leaseKeys, type LeaseKeys } from '../dist/lease/lease.keys.js';
import { LeaseProtocol } from '../dist/lease/redis/lease.protocol.js';
import { CLAIM_SCRIPT, RELEASE_SCRIPT } from '../dist/lease/redis/lease.scripts.js';
import { resolveLeaseSettings, type LeaseSettings } from '../dist/lease/lease.settings.js';
// Internal: the lease settings (key names, configuration) the module derives from its options, to seed them.
import { resolveSettings } from '../dist/module/snowflake.settings.js';
import { startRedis, type RedisProcess } from './redis-process.js';
import { TARGET_NEXT } from './ids.bench.js';
import {
  type Bench,
  type Log,
  type Settings,
  formatInt,
  formatPercent,
  markdownTable,
  measureThroughput,
  median,
  retryingExhausted,
} from './harness.js';

/** The admin client with the commands this benchmark defines on it (`defineCommand`). */
type BenchRedis = Redis & {
  snowflakeClaim(...keysAndArgs: (string | number)[]): Promise<unknown[]>;
  snowflakeRelease(...keysAndArgs: (string | number)[]): Promise<unknown[]>;
  benchNextId(key: string): Promise<unknown>;
};

const CLAIMS = 2000;
/** Requests outstanding at once against the round-trip generator: serial, and as a busy service would pipeline them. */
const IN_FLIGHT = [1, 16, 64];
const BOOTS = 15;

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * A namespace whose `held` IDs all hold live leases and whose `free` IDs expired long ago, as after a long run, its
 * cursor at `cursor`. Its marker names this Redis process and settled long ago, as it would have after the first
 * claims, and its meta carries the configuration the claims run with and the mirrors of the cursor and of the
 * expiry set's size: the scripts' prelude then sees the namespace intact, neither a new Redis process nor a partial
 * loss, and no claim waits for settling.
 */
export async function seedNamespace(
  redis: Redis,
  keys: LeaseKeys,
  { held, free, cursor, config }: { held: number; free: number; cursor: number; config: string },
): Promise<void> {
  const future = Date.now() + 3_600_000;
  const runId = /run_id:(\w+)/.exec(await redis.info('server'))![1];
  const replId = /master_replid:(\w+)/.exec(await redis.info('replication'))?.[1] ?? '';
  const server = `${runId}:${replId}`;
  await redis.del(keys.meta, keys.cursor, keys.expiry);
  for (let start = 0; start < held + free; start += 5000) {
    const pipeline = redis.pipeline();
    for (let id = start; id < Math.min(held + free, start + 5000); id++) {
      const record = `${keys.recordPrefix}${id}`;
      if (id < held) {
        pipeline.zadd(keys.expiry, future, id);
        pipeline.hset(record, 'token', `t${id}`, 'marker', 'bench', 'ceiling', 0);
      } else {
        // Every ID in the expiry set has a record: a claim that finds none takes it for a deleted key.
        pipeline.zadd(keys.expiry, 1, id);
        pipeline.hset(record, 'marker', 'bench', 'ceiling', 0);
      }
    }
    await pipeline.exec();
  }
  await redis.set(keys.cursor, cursor);
  await redis.hset(keys.meta, {
    marker: 'bench',
    created: 0,
    settleMs: 0,
    server,
    config,
    cursor: (await redis.get(keys.cursor)) ?? '',
    members: await redis.zcard(keys.expiry),
  });
}

/**
 * Claim latency: claim the oldest expired ID, give it back, repeat. Each claim is one EVALSHA round trip. The cursor
 * stands at the end of the ID space, as in a namespace that has handed out every ID once, so every claim takes the
 * sorted-set path (the oldest expired lease) rather than the cheaper never-used one.
 */
async function claimLatency(redis: BenchRedis, held: number): Promise<{ p50: number; p99: number }> {
  const free = 16;
  // 17 worker bits (65,536 held leases and the 16 free IDs beside them); the layout enters only the configuration.
  const layout = resolveLayout({ workerBits: 17, sequenceBits: 5 });
  const settings = resolveLeaseSettings({ url: 'redis://unused', ttlMs: 10_000 }, layout);
  const keys = leaseKeys({ namespace: `bench-${held}`, allocateDatacenter: false }, 0);
  const protocol = new LeaseProtocol(keys, settings);
  await seedNamespace(redis, keys, { held, free, cursor: settings.idCount, config: settings.config });
  const samples: number[] = [];
  // A claim names the ID whose record it declares; the lease remembers the one the last answer named.
  let candidate = held;
  for (let i = 0; i < CLAIMS + 200; i++) {
    const token = `c${i}`;
    let raw: unknown[];
    let reply: ReturnType<typeof LeaseProtocol.decodeClaim>;
    const start = performance.now();
    for (;;) {
      const args = protocol.claimArgs({
        token,
        holderNowMs: Date.now(),
        host: 'bench',
        pid: process.pid,
        excluded: [],
        candidate,
      });
      raw = await redis.snowflakeClaim(...protocol.scriptKeys(candidate), ...args);
      reply = LeaseProtocol.decodeClaim(raw);
      if (reply.kind !== 'retry') break;
      candidate = reply.candidate;
    }
    const elapsed = performance.now() - start;
    if (reply.kind !== 'ok') throw new Error(`claim ${i} replied ${JSON.stringify(raw)}`);
    if (reply.id < held) throw new Error(`claim ${i} took held ID ${reply.id}`);
    if (i >= 200) samples.push(elapsed);
    const released = LeaseProtocol.decodeRelease(
      await redis.snowflakeRelease(
        ...protocol.scriptKeys(reply.id),
        ...protocol.releaseArgs(reply.id, token, Date.now(), `r${i}`),
      ),
    );
    if (released.kind !== 'released') throw new Error(`release ${i} replied ${released.kind}`);
  }
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** Seeds the namespace of a module's lease options as settled, empty, under the configuration the module runs. */
export async function seedSettled(redis: Redis, options: SnowflakeModuleOptions): Promise<void> {
  const { datacenterId, lease } = leaseSettingsOf(options);
  const keys = leaseKeys(lease, datacenterId);
  await seedNamespace(redis, keys, { held: 0, free: 0, cursor: 0, config: lease.config });
}

/** The lease settings the module derives from `options` (which must configure `redis`). */
export function leaseSettingsOf(options: SnowflakeModuleOptions): { datacenterId: number; lease: LeaseSettings } {
  const { datacenterId, worker } = resolveSettings(options);
  if (worker.kind !== 'redis') throw new Error(`expected options with a Redis lease, got a ${worker.kind} worker ID`);
  return { datacenterId, lease: worker.lease };
}

async function bootApp(options: SnowflakeModuleOptions): Promise<INestApplicationContext> {
  class App {}
  Module({ imports: [SnowflakeModule.forRoot(options)] })(App);
  return NestFactory.createApplicationContext(App, { logger: false });
}

/**
 * `IdService.next()` with a static worker ID against `IdService.next()` with a Redis lease, whose permit reads the
 * monotonic clock and compares the wall clock with the Redis server's on every call: on `twitter`, whose cap binds,
 * and on a layout whose cap does not, where IDs per second show the cost of a call. One measuring run, round-robin.
 *
 * Each window holds the event loop; between windows the run yields for a moment, so that the lease renews as an app's
 * would (a window is far shorter than the fence, ttl - margin).
 */
/** A row of the clock-check table: `ids` and `cap` are absent on the `Date.now()` row. */
interface CheckCandidate {
  name: string;
  layoutName: string;
  kind: string;
  ids?: IdService;
  retries: { count: number };
  cap?: number;
  call: () => unknown;
}

async function clockCheckCost(server: RedisProcess, settings: Settings, log: Log) {
  const { windowMs, repeats } = settings;
  const layouts: { name: string; layout: LayoutPresetName | LayoutOptions }[] = [
    { name: '`twitter`', layout: 'twitter' },
    { name: '41/0/2/20 bits', layout: WIDE_LAYOUT },
  ];
  const ttlMs = 10_000;
  const apps: INestApplicationContext[] = [];
  try {
    const list: CheckCandidate[] = [];
    for (const [i, { name, layout }] of layouts.entries()) {
      const leased: SnowflakeModuleOptions = { layout, redis: { url: server.url, namespace: `next-${i}`, ttlMs } };
      await seedSettled(server.client, leased);
      const kinds: [string, SnowflakeModuleOptions][] = [
        ['static worker ID', { layout, workerId: 1 + i }],
        ['Redis lease', leased],
      ];
      for (const [kind, options] of kinds) {
        const app = await bootApp(options);
        apps.push(app);
        const ids = app.get(IdService);
        const retries = { count: 0 };
        list.push({
          name: `${name}, ${kind}`,
          layoutName: name,
          kind,
          ids,
          retries,
          cap: 2 ** ids.layout.sequenceBits * (1000 / ids.layout.timeUnitMs),
          call: retryingExhausted(() => ids.next(), retries),
        });
      }
    }
    // The price of a clock read, in the same run: the target is a leased next() within 1.35× of it.
    list.push({
      name: '`Date.now()`',
      layoutName: '`Date.now()` alone',
      kind: '',
      retries: { count: 0 },
      call: () => Date.now(),
    });
    const rates = await measureYielding(list, { windowMs, repeats, log });
    for (const candidate of list) {
      if (candidate.ids === undefined) continue;
      const status = candidate.ids.status();
      if (!status.ready) throw new Error(`${candidate.name}: not ready after the run (${status.lease?.state})`);
    }
    return { ttlMs, rows: list.map((candidate, i) => ({ ...candidate, rate: rates[i].median })) };
  } finally {
    for (const app of apps) await app.close();
  }
}

/** {@link measureThroughput}, one window at a time, yielding to the event loop between windows. */
async function measureYielding(
  candidates: readonly CheckCandidate[],
  { windowMs, repeats, log }: { windowMs: number; repeats: number; log: Log },
): Promise<{ median: number; rates: number[] }[]> {
  const results = candidates.map((): number[] => []);
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  for (const candidate of candidates) {
    measureThroughput([candidate], { windowMs: Math.min(300, windowMs), repeats: 1, log: () => undefined });
    await pause();
  }
  for (let round = 0; round < repeats; round++) {
    for (const [i, candidate] of candidates.entries()) {
      const [{ median: rate }] = measureThroughput([candidate], { windowMs, repeats: 1, log: () => undefined });
      results[i].push(rate);
      log(`  round ${round + 1}/${repeats} ${candidate.name}: ${Math.round(rate)} IDs/s`);
      await pause();
    }
  }
  return results.map((rates) => ({ median: [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)], rates }));
}

async function bootTime(options: ((i: number) => SnowflakeModuleOptions) | undefined): Promise<number> {
  class Bare {}
  Module({})(Bare);
  const times: number[] = [];
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
async function roundTripRate(redis: BenchRedis, windowMs: number, inFlight: number): Promise<number> {
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

/** The wide layout of the clock-check rows: a 20-bit sequence, so that the layout's cap does not bind. */
const WIDE_LAYOUT = { preset: 'twitter', datacenterBits: 0, workerBits: 2, sequenceBits: 20 } as const;

function localRate(windowMs: number, layout: LayoutOptions = { preset: 'twitter' }): number {
  const generator = new SnowflakeGenerator({ layout: resolveLayout(layout), workerId: 1 });
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
      const redis = server.client as BenchRedis;
      redis.defineCommand('snowflakeClaim', { numberOfKeys: 4, lua: CLAIM_SCRIPT });
      redis.defineCommand('snowflakeRelease', { numberOfKeys: 4, lua: RELEASE_SCRIPT });

      log('  claim latency, warm-up');
      await claimLatency(redis, 15);
      log('  claim latency, 16 held leases');
      const small = await claimLatency(redis, 16);
      log('  claim latency, 65,536 held leases');
      const large = await claimLatency(redis, 65_536);

      log('  bootstrap time');
      const bare = await bootTime(undefined);
      const staticBoot = await bootTime(() => ({ workerId: 1 }));
      const leaseOptions: SnowflakeModuleOptions = {
        layout: { workerBits: 10 },
        redis: { url: server.url, namespace: 'boot' },
      };
      // A settled namespace, as in a running deployment: the first-use settling wait is not part of a boot.
      await seedSettled(redis, leaseOptions);
      const leaseBoot = await bootTime(() => leaseOptions);

      log('  cost of the clock check on next()');
      const check = await clockCheckCost(server, settings, log);

      log('  local generation against a Redis round trip per ID');
      redis.defineCommand('benchNextId', { numberOfKeys: 1, lua: LUA_GENERATOR });
      const remote: Record<number, number> = {};
      for (const inFlight of IN_FLIGHT) {
        remote[inFlight] = median([
          await roundTripRate(redis, settings.windowMs / 2, inFlight),
          await roundTripRate(redis, settings.windowMs / 2, inFlight),
        ]);
      }
      const fastestRemote = Math.max(...Object.values(remote));
      const local = median([localRate(settings.windowMs / 2), localRate(settings.windowMs / 2)]);
      // On \`twitter\` a worker is capped at 4,096,000 IDs/s, which bounds the ratio at about 50× a round trip that
      // keeps 64 requests in flight (about 85,000 IDs/s): a cap of the layout, not a cost of the generator. The
      // in-flight target is taken on the wide layout, where the cap does not bind.
      const localWide = median([
        localRate(settings.windowMs / 2, WIDE_LAYOUT),
        localRate(settings.windowMs / 2, WIDE_LAYOUT),
      ]);

      const fmt = (ms: number) => `${ms.toFixed(3)} ms`;
      const [twitterStatic, twitterLeased, wideStatic, wideLeased, dateNow] = check.rows;
      const wideLeasedRatio = wideLeased.rate / wideStatic.rate;
      const leasedOverNow = dateNow.rate / wideLeased.rate;
      const leasedShare = twitterLeased.rate / twitterLeased.cap!;
      const leasedRatio = twitterLeased.rate / twitterStatic.rate;
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
          `Cost of the clock check on \`next()\`: with a lease, the first ID of each time unit asks the lease for its ` +
            "ceiling, which reads the monotonic clock and compares the wall clock with the Redis server's clock " +
            '(projected from the last round trip); further IDs of that unit ask nothing. A bare `Date.now()` is ' +
            `measured alongside. \`IdService.next()\` in four apps, IDs per second as the median of ${settings.repeats} ` +
            `windows of ${settings.windowMs} ms, round-robin in one run. On \`twitter\` the cap binds; on the ` +
            'wide layout it does not, and the ratio is the cost of the check. Each window holds the event loop; the ' +
            `run yields between windows, so the lease (TTL ${check.ttlMs / 1000} s) renews as an app's would.`,
          '',
          markdownTable(
            ['`IdService.next()`', 'worker ID', 'IDs/s', 'cap (IDs/s)', 'of cap', 'ns per ID', 'leased / static'],
            check.rows.map((row, i) => [
              row.layoutName,
              row.retries.count > 0
                ? `${row.kind}; SequenceExhaustedError thrown ${formatInt(row.retries.count)}×, retried`
                : row.kind,
              formatInt(row.rate),
              row.cap === undefined ? '' : formatInt(row.cap),
              row.cap === undefined ? '' : formatPercent(row.rate / row.cap),
              (1e9 / row.rate).toFixed(1),
              row.cap !== undefined && i % 2 === 1 ? `${(row.rate / check.rows[i - 1].rate).toFixed(3)}×` : '',
            ]),
            ['left', 'left', 'right', 'right', 'right', 'right', 'right'],
          ),
        ].join('\n'),
        [
          'Local generation against one Redis round trip per ID (a Lua script computes time and sequence in Redis), ' +
            'with 1, 16 and 64 requests in flight from one client; the ratio is local over each.',
          '',
          '| generator | IDs/s | local / this |',
          '| :-- | --: | --: |',
          `| local \`next()\` (twitter layout, capped at 4,096,000/s) | ${Math.round(local).toLocaleString('en-US')} | 1× |`,
          `| local \`next()\` (41/0/2/20 bits, the cap does not bind) | ${Math.round(localWide).toLocaleString('en-US')} | |`,
          ...IN_FLIGHT.map(
            (inFlight) =>
              `| one Redis round trip per ID, ${inFlight} in flight | ${Math.round(remote[inFlight]).toLocaleString('en-US')} | ${(local / remote[inFlight]).toFixed(0)}× (wide: ${(localWide / remote[inFlight]).toFixed(0)}×) |`,
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
          name: '`next()` on `twitter` with a Redis lease, share of the cap',
          measured: `${formatPercent(leasedShare)} (leased / static ${leasedRatio.toFixed(3)}×)`,
          goal: `≥ ${formatPercent(TARGET_NEXT)}`,
          pass: leasedShare >= TARGET_NEXT,
        },
        {
          name: '`next()` on the wide layout with a Redis lease / with a static worker ID',
          measured: `${wideLeasedRatio.toFixed(3)}×`,
          goal: '≥ 0.95×',
          pass: wideLeasedRatio >= 0.95,
        },
        {
          name: '`next()` on the wide layout with a Redis lease, cost against `Date.now()`',
          measured: `${leasedOverNow.toFixed(3)}× (${(1e9 / wideLeased.rate).toFixed(1)} ns / ${(1e9 / dateNow.rate).toFixed(1)} ns)`,
          goal: '≤ 1.35×',
          pass: leasedOverNow <= 1.35,
        },
        {
          name: 'local generation / round trip per ID, serial',
          measured: `${(local / remote[1]).toFixed(0)}×`,
          goal: '≥ 100×',
          pass: local / remote[1] >= 100,
        },
        {
          name: 'local generation (wide layout) / round trip per ID, fastest of 1, 16, 64 in flight',
          measured: `${(localWide / fastestRemote).toFixed(0)}× (on \`twitter\`, capped: ${(local / fastestRemote).toFixed(0)}×)`,
          goal: '≥ 100×',
          pass: localWide / fastestRemote >= 100,
        },
      ];
      return { sections, targets };
    } finally {
      await server.stop();
    }
  },
} satisfies Bench;
