/**
 * The lease at scale, against one real redis-server: many instances (lease clients, each with its own connection,
 * its own generator and the real claim, renewal and recovery code) in this process.
 *
 * - Claim storm: INSTANCES clients boot at once in a settled namespace that already holds 65,536 live leases of
 *   other instances (so every claim searches the sorted set of expiries): each claim's latency, and all distinct.
 *   It runs twice: first with every instance's connection open beforehand (an app's own ioredis client, connected),
 *   so that the times are the claims' alone, then with a URL, each instance connecting as it boots.
 *   Redis's script cache holds the lease's scripts, as a live fleet's claims and renewals leave it
 *   (BENCH_SCALE_SCRIPTS=cold: empty, as right after Redis started). The table shows what each boot sends (counted
 *   on the lease clients) and the CPU time of this process and of Redis during the storm: with every instance in
 *   one process, this process's CPU time, not Redis, bounds the storm.
 *   Every claim names a candidate (its record is a declared key); all of them first guess ID 0, which is held, and
 *   the burst's retry answers name the expired IDs one after another, oldest first, so that each claim takes its own
 *   with its second script (sent to one ID and then spread at random, a storm ran about 3.6 scripts a claim; without
 *   either, about N^2 / 2 for N claims): the table shows the scripts per claim and their Redis time.
 *   Beside it, the floor of any claim of two round trips in this process: the same open connections each send two
 *   scripts that only read `TIME`, all at once.
 * - Renewal load: the same clients renew for a while; Redis's own CPU time (`INFO cpu`) per 1,000 instances.
 * - Thundering herd: the redis-server is killed (its data is lost) and started again; every holder's first renewal
 *   after it must take its worker ID back ('recovered') within one renew interval of Redis answering again, and
 *   issue meanwhile.
 */
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { SnowflakeGenerator, resolveLayout, type Layout, type LeaseRenewalSample } from 'nestjs-snowflake';
// Internal, on purpose: a thousand lease clients in one process are the module's parts without a Nest app each.
import { leaseKeys } from '../dist/lease/lease.keys.js';
import { LEASE_SCRIPTS } from '../dist/lease/redis/script-cache.js';
import { resolveLeaseSettings } from '../dist/lease/lease.settings.js';
import { RedisWorkerSource } from '../dist/lease/redis-worker.source.js';
import { WorkerBinding } from '../dist/worker/worker-binding.js';
import { seedNamespace } from './lease.bench.js';
import { type Bench, formatInt, markdownTable } from './harness.js';
import { startRedis } from './redis-process.js';

const INSTANCES = Number(process.env.BENCH_SCALE_INSTANCES ?? 1000);
const COLD_SCRIPT_CACHE = process.env.BENCH_SCALE_SCRIPTS === 'cold';
const OTHERS_HELD = 65_536;
const TTL_MS = 10_000;
const RENEWAL_WINDOW_MS = 10_000;
const RESTART_DOWN_MS = 500;
const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Counts the commands the lease clients send (every ioredis client but `except`), by name, while `counting` is
 * on: the handshake a connection sends before its first script included, which the server's statistics mix with
 * the commands scripts run.
 */
function countSentCommands(except: Redis) {
  const sent = new Map<string, number>();
  const state = { counting: false };
  type SendCommand = (this: Redis, command: { name: string }, ...rest: unknown[]) => unknown;
  const prototype = Redis.prototype as unknown as { sendCommand: SendCommand };
  const original = prototype.sendCommand;
  prototype.sendCommand = function (this: Redis, command: { name: string }, ...rest: unknown[]) {
    if (state.counting && this !== except) sent.set(command.name, (sent.get(command.name) ?? 0) + 1);
    return original.call(this, command, ...rest);
  };
  return { sent, state, restore: () => (prototype.sendCommand = original) };
}

async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)![1]);
  return read('used_cpu_sys') + read('used_cpu_user');
}

/**
 * One instance: a generator bound to a Redis lease, as the module builds them, with its claim timed. `connection`: a
 * URL (the lease connects at boot) or an app's own client, already connected.
 */
function instance(connection: { url: string } | { client: Redis }, layout: Layout, namespace: string) {
  const settings = resolveLeaseSettings({ ...connection, namespace, ttlMs: TTL_MS }, layout);
  const source = new RedisWorkerSource(settings, 0);
  const generator = new SnowflakeGenerator({ layout, clockBackToleranceMs: settings.clockBackToleranceMs });
  const binding = new WorkerBinding(generator, source, layout, { now: Date.now }, quiet);
  return { settings, source, generator, binding };
}

type Instance = ReturnType<typeof instance>;

/** Starts every instance at once; each start's time, and what the storm cost this process and Redis. */
async function storm(redis: Redis, instances: readonly Instance[], log: (line: string) => void) {
  await redis.config('RESETSTAT');
  const counter = countSentCommands(redis);
  const cpuBefore = { redis: await redisCpuSeconds(redis), node: process.cpuUsage() };
  counter.state.counting = true;
  const claimMs = await Promise.all(
    instances.map(async ({ binding }) => {
      const started = performance.now();
      await binding.start();
      return performance.now() - started;
    }),
  );
  counter.state.counting = false;
  counter.restore();
  const nodeCpu = process.cpuUsage(cpuBefore.node);
  const cpuMs = {
    node: (nodeCpu.user + nodeCpu.system) / 1000,
    redis: ((await redisCpuSeconds(redis)) - cpuBefore.redis) * 1000,
  };
  const n = instances.length;
  const sentPerBoot = [...counter.sent]
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `${name.toUpperCase()} ${(count / n).toFixed(2)}`)
    .join(', ');
  const sentTotal = [...counter.sent.values()].reduce((sum, count) => sum + count, 0) / n;
  log(`  claim storm: sent per boot ${sentPerBoot}; CPU ms ${JSON.stringify(cpuMs)}`);
  const commandStats = await redis.info('commandstats');
  const field = (command: string, name: string) =>
    Number(new RegExp(`cmdstat_${command}:.*\\b${name}=(\\d+)`).exec(commandStats)?.[1] ?? 0);
  // Script runs: an EVALSHA refused with NOSCRIPT counts as a failed call and ran nothing.
  const runs = (command: string) =>
    field(command, 'calls') - field(command, 'failed_calls') - field(command, 'rejected_calls');
  const scripts = runs('evalsha') + runs('eval');
  const scriptUsec = ['eval', 'evalsha'].reduce(
    (sum, command) =>
      sum + Number(new RegExp(`cmdstat_${command}:calls=\\d+,usec=(\\d+)`).exec(commandStats)?.[1] ?? 0),
    0,
  );
  log(
    `  claim storm: ${[...commandStats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map((m) => `${m[1]} ${m[2]}`).join(', ')}, ${scriptUsec} µs in scripts`,
  );
  const workerIds = instances.map(({ generator }) => generator.workerId);
  return {
    claimMs,
    cpuMs,
    sentPerBoot,
    sentTotal,
    scriptsPerClaim: scripts / n,
    scriptMsPerClaim: scriptUsec / 1000 / n,
    scriptMs: scriptUsec / 1000,
    distinct: new Set(workerIds).size === n && workerIds.every((id) => id >= OTHERS_HELD),
  };
}

/**
 * The floor under a storm in this process: the same connections, each sending two scripts in a row (as a claim does)
 * that only read `TIME`, all at once; no lease code, no keys. Each client's time, as the storm measures a claim's.
 */
async function bareRoundTrips(admin: Redis, clients: readonly Redis[]): Promise<number[]> {
  const sha = (await admin.script('LOAD', "return redis.call('TIME')")) as string;
  return Promise.all(
    clients.map(async (client) => {
      const started = performance.now();
      await client.evalsha(sha, 0);
      await client.evalsha(sha, 0);
      return performance.now() - started;
    }),
  );
}

/** The table's rows for one storm. */
function stormRows(label: string, result: Awaited<ReturnType<typeof storm>>): string[][] {
  const n = result.claimMs.length;
  const ms = (value: number) => `${value.toFixed(1)} ms`;
  return [
    [
      `${label}: p50 / p99 / max`,
      `${ms(percentile(result.claimMs, 50))} / ${ms(percentile(result.claimMs, 99))} / ${ms(Math.max(...result.claimMs))}`,
    ],
    [`${label}: distinct worker IDs`, result.distinct ? `${formatInt(n)} of ${formatInt(n)}` : 'no'],
    [
      `${label}: commands each instance sends, one round trip each`,
      `${result.sentTotal.toFixed(2)}: ${result.sentPerBoot}`,
    ],
    [
      `${label}: CPU time of this process (every instance) / of Redis, per instance`,
      `${(result.cpuMs.node / n).toFixed(2)} ms / ${(result.cpuMs.redis / n).toFixed(2)} ms ` +
        `(all: ${result.cpuMs.node.toFixed(0)} ms / ${result.cpuMs.redis.toFixed(0)} ms)`,
    ],
    [
      `${label}: scripts run by Redis per claim, and their Redis time`,
      `${result.scriptsPerClaim.toFixed(2)}, ${result.scriptMsPerClaim.toFixed(3)} ms (all claims: ${result.scriptMs.toFixed(0)} ms)`,
    ],
  ];
}

export default {
  name: 'scale',
  title: 'The lease at scale',

  async run({ log }) {
    const server = await startRedis();
    const layout = resolveLayout({ workerBits: 17, sequenceBits: 5 });
    const instances = Array.from({ length: INSTANCES }, () => instance({ url: server.url }, layout, 'scale'));
    const { settings } = instances[0];
    // The same storm with every connection open beforehand (each instance an app's own client, connected): the
    // claims alone, without the connections' set-up.
    const clients = Array.from({ length: INSTANCES }, () => new Redis(server.url, { lazyConnect: true }));
    const claimers = clients.map((client) => instance({ client }, layout, 'scale-open'));
    try {
      // 65,536 live leases of others, and room for INSTANCES more beside them, the never-used cursor spent.
      for (const { settings: own } of [instances[0], claimers[0]]) {
        await seedNamespace(server.client, leaseKeys(own, 0), {
          held: OTHERS_HELD,
          free: INSTANCES + 16,
          cursor: own.idCount,
          config: own.config,
        });
      }
      if (!COLD_SCRIPT_CACHE) {
        for (const { lua } of Object.values(LEASE_SCRIPTS)) await server.client.script('LOAD', lua);
      }
      await Promise.all(clients.map((client) => client.connect()));
      log(`  floor: ${INSTANCES} connections send two bare scripts each, at once`);
      await bareRoundTrips(server.client, clients); // warms the connections, for the floor as for the claims after it
      const floorMs = await bareRoundTrips(server.client, clients);
      log(`  claim storm, connections open: ${INSTANCES} instances claim at once`);
      const claim = await storm(server.client, claimers, log);
      await Promise.all(claimers.map(({ binding }) => binding.stop()));
      await Promise.all(clients.map((client) => client.quit()));

      log(`  claim storm: ${INSTANCES} instances boot at once (script cache ${COLD_SCRIPT_CACHE ? 'cold' : 'warm'})`);
      const boot = await storm(server.client, instances, log);
      const workerIds = instances.map(({ generator }) => generator.workerId);

      log(`  renewal load: ${RENEWAL_WINDOW_MS} ms of renewals`);
      const renewals = { count: 0, failed: 0, causes: new Map<string | null, number>() };
      const herd = new Map<number, { outcome: LeaseRenewalSample['outcome']; at: number }>();
      let restartedAt = Infinity;
      for (const [i, { source }] of instances.entries()) {
        source.onRenewal((sample: LeaseRenewalSample) => {
          renewals.count++;
          if (sample.outcome === 'failed') {
            renewals.failed++;
            renewals.causes.set(sample.cause, (renewals.causes.get(sample.cause) ?? 0) + 1);
          }
          if (performance.now() > restartedAt && !herd.has(i) && sample.outcome !== 'failed') {
            herd.set(i, { outcome: sample.outcome, at: performance.now() });
          }
        });
      }
      const cpuBefore = await redisCpuSeconds(server.client);
      const renewalsBefore = renewals.count;
      const windowStart = performance.now();
      await sleep(RENEWAL_WINDOW_MS);
      const windowMs = performance.now() - windowStart;
      const cpuSeconds = (await redisCpuSeconds(server.client)) - cpuBefore;
      const renewalsInWindow = renewals.count - renewalsBefore;
      const failedInWindow = renewals.failed;
      const failedCauses = [...renewals.causes].map(([cause, n]) => `${cause} ${n}`).join(', ') || 'none';
      log(`  renewals failed: ${failedCauses}`);
      const cpuShare = cpuSeconds / (windowMs / 1000);
      const perThousand = (cpuShare * 1000) / INSTANCES;

      log('  thundering herd: Redis killed (data lost) and started again');
      const refusedBefore = { count: 0 };
      const issue = setInterval(() => {
        for (const { generator } of instances) {
          try {
            generator.next();
          } catch {
            refusedBefore.count++;
          }
        }
      }, 50);
      // Renewals answered once the old server has died count (not the ones it answered while the kill was under
      // way: with 1,000 leases claimed within a second their renewals come in bursts, and some are in flight then);
      // a holder may take its ID back as soon as the new server answers, before start() has returned.
      const killedAt = performance.now();
      await server.kill();
      restartedAt = performance.now();
      await sleep(Math.max(0, RESTART_DOWN_MS - (restartedAt - killedAt)));
      await server.start();
      const answeredAt = performance.now();
      const deadline = answeredAt + 2 * settings.renewIntervalMs + 5000;
      while (herd.size < INSTANCES && performance.now() < deadline) await sleep(100);
      clearInterval(issue);
      const afterRestart = [...herd.values()].map((entry) => entry.at - answeredAt);
      const recovered = [...herd.values()].filter((entry) => entry.outcome === 'recovered').length;
      const outcomes: Record<string, number> = {};
      for (const entry of herd.values()) outcomes[entry.outcome] = (outcomes[entry.outcome] ?? 0) + 1;
      outcomes['no answer yet'] = INSTANCES - herd.size;
      const herdOutcomes = Object.entries(outcomes)
        .filter(([, n]) => n > 0)
        .map(([outcome, n]) => `${outcome} ${n}`)
        .join(', ');
      const lastRecoveryMs = afterRestart.length === 0 ? Infinity : Math.max(...afterRestart);
      const sameIds = instances.every(({ generator }, i) => generator.workerId === workerIds[i]);

      const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
      const sections = [
        markdownTable(
          ['measure', 'value'],
          [
            ['instances (lease clients, one connection each, in one process)', formatInt(INSTANCES)],
            ['live leases of other instances in the namespace', formatInt(OTHERS_HELD)],
            ...stormRows(
              `claim storm, booting (connect and claim; script cache ${COLD_SCRIPT_CACHE ? 'cold' : 'warm'})`,
              boot,
            ),
            ...stormRows('claim storm, connections open (claims only)', claim),
            [
              'floor: the same connections, two round trips each of a script that reads `TIME` only: p50 / p99 / max',
              `${fmt(percentile(floorMs, 50))} / ${fmt(percentile(floorMs, 99))} / ${fmt(Math.max(...floorMs))}`,
            ],
            [
              `renewals in ${formatInt(windowMs)} ms (TTL ${TTL_MS / 1000} s, every ${settings.renewIntervalMs / 1000} s)`,
              `${formatInt(renewalsInWindow)} (${formatInt((renewalsInWindow * 1000) / windowMs)}/s, ${failedInWindow} failed: ${failedCauses})`,
            ],
            ['Redis CPU (`INFO cpu`, user + sys) per 1,000 instances', `${(perThousand * 100).toFixed(2)} % of a core`],
            [
              `… extrapolated to ${formatInt(OTHERS_HELD)} instances`,
              `${((perThousand * OTHERS_HELD) / 10).toFixed(0)} % of a core`,
            ],
            [
              `thundering herd: holders recovered after a restart (${RESTART_DOWN_MS} ms down, data lost)`,
              `${formatInt(recovered)} of ${formatInt(INSTANCES)}, the last ${fmt(lastRecoveryMs)} after Redis answered`,
            ],
            ['thundering herd: first answered renewal after the restart, by outcome', herdOutcomes],
            ['thundering herd: every holder kept its worker ID', sameIds ? 'yes' : 'no'],
          ],
          ['left', 'right'],
        ),
      ];
      const targets = [
        {
          name: `claim storm (${INSTANCES} at once, connections open): claim p99`,
          measured: `${fmt(percentile(claim.claimMs, 99))} (two bare round trips: ${fmt(percentile(floorMs, 99))})`,
          goal: '< 50 ms',
          pass: percentile(claim.claimMs, 99) < 50,
        },
        {
          name: `claim storm (${INSTANCES} booting at once): boot p99`,
          measured: fmt(percentile(boot.claimMs, 99)),
          goal: 'n/a',
          pass: true,
          verdict: 'report',
        },
        {
          name: 'claim storm: all worker IDs distinct',
          measured: boot.distinct && claim.distinct ? 'yes' : 'no',
          goal: 'yes',
          pass: boot.distinct && claim.distinct,
        },
        {
          name: 'renewal load: Redis CPU per 1,000 instances',
          measured: `${(perThousand * 100).toFixed(2)} % of a core`,
          goal: 'n/a',
          pass: true,
          verdict: 'report',
        },
        {
          name: 'thundering herd: every holder recovered within one renew interval',
          measured: `${formatInt(recovered)} of ${formatInt(INSTANCES)}, last at ${fmt(lastRecoveryMs)}`,
          goal: `all, ≤ ${fmt(settings.renewIntervalMs)}`,
          pass: recovered === INSTANCES && lastRecoveryMs <= settings.renewIntervalMs && sameIds,
        },
      ];
      return { sections, targets };
    } finally {
      await Promise.all(instances.map(({ binding }) => binding.stop().catch(() => undefined)));
      for (const client of clients) client.disconnect();
      await server.stop();
    }
  },
} satisfies Bench;
