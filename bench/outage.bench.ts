/**
 * What a Redis restart or outage costs an app that leases its worker ID: a Nest app calls `IdService.next()` about
 * once a millisecond while the redis-server is killed (SIGKILL, no persistence: its data is lost) and started again
 * on the same port.
 *
 * - A running instance across a restart with a short downtime: it keeps its lease locally until its fence, and its
 *   first renewal after the restart takes its worker ID back into the new data ('recovered').
 * - A running instance across an outage longer than the TTL: it fences, loses the lease, and claims again once the
 *   namespace has settled.
 * - A new instance booted right after a restart: its claim waits for the namespace to settle (12 s).
 */
import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { performance } from 'node:perf_hooks';
import { IdService, SnowflakeModule, WorkerUnavailableError, type SnowflakeModuleOptions } from 'nestjs-snowflake';
// Internal: the settling time after a data loss is the lease's constant, not an option; the goal quotes it.
import { SETTLE_AFTER_LOSS_MS } from '../dist/lease/lease.contract.js';
import { leaseSettingsOf } from './lease.bench.js';
import { type Bench, type Log, formatInt, markdownTable, median } from './harness.js';
import { startRedis, type RedisProcess } from './redis-process.js';

type LeaseSettings = ReturnType<typeof leaseSettingsOf>['lease'];

const TTL_MS = 3000;
const RESTART_DOWN_MS = 1000;
const RESTARTS = 3;
/** Where in the renewal interval each restart falls: just after a renewal, half-way, and just before the next. */
const RESTART_PHASES = [0.1, 0.5, 0.95];
const OUTAGE_DOWN_MS = TTL_MS + 2000;
const NEW_INSTANCE_BOOTS = 3;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function moduleOptions(url: string, namespace: string): SnowflakeModuleOptions {
  return { layout: { workerBits: 10 }, redis: { url, namespace, ttlMs: TTL_MS } };
}

async function bootApp(options: SnowflakeModuleOptions): Promise<INestApplicationContext> {
  class App {}
  Module({ imports: [SnowflakeModule.forRoot(options)] })(App);
  return NestFactory.createApplicationContext(App, { logger: false });
}

/**
 * Calls `next()` on a 1 ms timer and records, per call, the monotonic time and the outcome: an ID, the
 * `WorkerUnavailableError` reason, or the name of any other error.
 */
class Driver {
  private readonly times: number[] = [];
  private readonly outcomes: string[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly ids: IdService) {}

  start() {
    this.timer = setInterval(() => {
      const at = performance.now();
      let outcome = 'ok';
      try {
        this.ids.next();
      } catch (error) {
        outcome =
          error instanceof WorkerUnavailableError ? error.reason : error instanceof Error ? error.name : String(error);
      }
      this.times.push(at);
      this.outcomes.push(outcome);
    }, 1);
  }

  stop() {
    clearInterval(this.timer);
  }

  /** Whether a call after `since` issued an ID. */
  succeededSince(since: number): boolean {
    for (let i = this.times.length - 1; i >= 0 && this.times[i] > since; i--) {
      if (this.outcomes[i] === 'ok') return true;
    }
    return false;
  }

  /**
   * The calls between `from` and `to`: how many, the refused ones by reason, and the time without IDs (the longest
   * span from a first refused call to the next successful one; to `to` when none succeeded after it).
   */
  summary(from: number, to: number) {
    let calls = 0;
    let gapMs = 0;
    let recovered = true;
    let firstRefused: number | null = null;
    const refused: Record<string, number> = {};
    for (let i = 0; i < this.times.length; i++) {
      const at = this.times[i];
      if (at < from || at > to) continue;
      calls++;
      const outcome = this.outcomes[i];
      if (outcome === 'ok') {
        if (firstRefused !== null) gapMs = Math.max(gapMs, at - firstRefused);
        firstRefused = null;
      } else {
        refused[outcome] = (refused[outcome] ?? 0) + 1;
        firstRefused ??= at;
      }
    }
    if (firstRefused !== null) {
      gapMs = Math.max(gapMs, to - firstRefused);
      recovered = false;
    }
    return { calls, refused, gapMs, recovered };
  }
}

/** Resolves just after the lease's next confirmed renewal (its `lastRenewalAt` changes). */
async function nextRenewal(ids: IdService, limitMs: number): Promise<void> {
  const before = ids.status().lease?.lastRenewalAt;
  const deadline = performance.now() + limitMs;
  while (ids.status().lease?.lastRenewalAt === before) {
    if (performance.now() > deadline) throw new Error(`no renewal within ${limitMs} ms`);
    await sleep(2);
  }
}

function describeRefused(refused: Record<string, number>): string {
  const entries = Object.entries(refused);
  if (entries.length === 0) return 'none';
  return entries.map(([reason, count]) => `${formatInt(count)} \`${reason}\``).join(', ');
}

/** A running instance across restarts with a short downtime, then across an outage longer than the TTL. */
async function runningInstance(server: RedisProcess, lease: LeaseSettings, log: Log) {
  const app = await bootApp(moduleOptions(server.url, 'running'));
  const ids = app.get(IdService);
  const driver = new Driver(ids);
  driver.start();
  try {
    const restarts: (ReturnType<Driver['summary']> & { phase: number; downMs: number; kept: boolean })[] = [];
    for (let r = 0; r < RESTARTS; r++) {
      const phase = RESTART_PHASES[r % RESTART_PHASES.length];
      await nextRenewal(ids, 2 * TTL_MS);
      await sleep(phase * lease.renewIntervalMs);
      const before = ids.status();
      const from = performance.now();
      const { killedAt, answeredAt } = await server.restart(RESTART_DOWN_MS);
      // Past the latest moment the fence could fall, with a renewal interval to spare.
      await sleep(TTL_MS + lease.renewIntervalMs);
      const after = ids.status();
      const result = {
        phase,
        downMs: answeredAt - killedAt,
        ...driver.summary(from, performance.now()),
        kept: after.workerId === before.workerId && after.lease?.switches === before.lease?.switches,
      };
      restarts.push(result);
      log(
        `  restart ${r + 1}/${RESTARTS}: down ${Math.round(result.downMs)} ms, ${formatInt(result.calls)} calls, ` +
          `time without IDs ${Math.round(result.gapMs)} ms, refused: ${describeRefused(result.refused)}, ` +
          `worker ID ${before.workerId} → ${after.workerId}`,
      );
    }

    await nextRenewal(ids, 2 * TTL_MS);
    const before = ids.status();
    const from = performance.now();
    const { killedAt, answeredAt } = await server.restart(OUTAGE_DOWN_MS);
    // Until IDs flow again (bounded: fence, loss, settling, a claim), then a moment more.
    const deadline = performance.now() + 4 * TTL_MS + 5000;
    while (!driver.succeededSince(answeredAt) && performance.now() < deadline) await sleep(10);
    await sleep(500);
    const after = ids.status();
    const outage = {
      downMs: answeredAt - killedAt,
      ...driver.summary(from, performance.now()),
      kept: after.workerId === before.workerId && after.lease?.switches === before.lease?.switches,
      workerIds: `${before.workerId} → ${after.workerId}`,
    };
    log(
      `  outage: down ${Math.round(outage.downMs)} ms, ${formatInt(outage.calls)} calls, time without IDs ` +
        `${Math.round(outage.gapMs)} ms, refused: ${describeRefused(outage.refused)}, worker ID ${outage.workerIds}`,
    );
    return { restarts, outage };
  } finally {
    driver.stop();
    await app.close();
  }
}

/** New instances, each booted right after a restart, against a Redis that lost the namespace's data. */
async function newInstances(server: RedisProcess, log: Log) {
  const boots: { bootMs: number; firstIdMs: number }[] = [];
  for (let i = 0; i < NEW_INSTANCE_BOOTS; i++) {
    await server.restart(RESTART_DOWN_MS);
    const start = performance.now();
    const app = await bootApp(moduleOptions(server.url, 'new'));
    try {
      const booted = performance.now();
      await app.get(IdService).nextAsync();
      const firstId = performance.now();
      boots.push({ bootMs: booted - start, firstIdMs: firstId - start });
      log(`  new instance ${i + 1}/${NEW_INSTANCE_BOOTS}: first ID ${Math.round(firstId - start)} ms after boot start`);
    } finally {
      await app.close();
    }
  }
  return boots;
}

export default {
  name: 'outage',
  title: 'Redis restarts and outages',
  async run({ log }) {
    const server = await startRedis();
    try {
      const { lease } = leaseSettingsOf(moduleOptions(server.url, 'running'));
      log(`  a running instance across ${RESTARTS} restarts (${RESTART_DOWN_MS} ms down) and an outage`);
      const { restarts, outage } = await runningInstance(server, lease, log);
      log('  new instances booted right after a restart');
      const boots = await newInstances(server, log);

      const ms = (value: number) => `${formatInt(value)} ms`;
      const maxGap = Math.max(...restarts.map((r) => r.gapMs));
      const allRecovered = restarts.every((r) => r.recovered);
      const firstIds = boots.map((b) => b.firstIdMs);
      const fenceAfterMs = lease.ttlMs - lease.fenceMarginMs;

      const sections = [
        `One Nest app with \`SnowflakeModule.forRoot({ layout: { workerBits: 10 }, redis: { url, namespace, ttlMs: ` +
          `${TTL_MS} } })\` calls \`IdService.next()\` on a 1 ms timer while the redis-server is killed (SIGKILL; ` +
          'no snapshots, no append-only file, so it comes back empty) and started again on the same port. TTL ' +
          `${ms(lease.ttlMs)}, renewed every ${ms(lease.renewIntervalMs)}, fence margin ${ms(lease.fenceMarginMs)}: ` +
          `a holder stops issuing ${ms(fenceAfterMs)} after it sent its last confirmed renewal, and after a data ` +
          `loss the namespace settles for 12 s, whatever the TTL. Time without IDs is the longest span from a refused call to the ` +
          'next successful one.',
        markdownTable(
          ['event', 'Redis down', 'calls', 'time without IDs', 'refused calls', 'worker ID'],
          [
            ...restarts.map((r, i) => [
              `restart ${i + 1}, ${Math.round(r.phase * 100)} % into the renewal interval`,
              ms(r.downMs),
              formatInt(r.calls),
              r.recovered ? ms(r.gapMs) : `${ms(r.gapMs)}, not recovered`,
              describeRefused(r.refused),
              r.kept ? 'kept' : 'changed',
            ]),
            [
              `outage of TTL + ${ms(OUTAGE_DOWN_MS - TTL_MS)}`,
              ms(outage.downMs),
              formatInt(outage.calls),
              outage.recovered ? ms(outage.gapMs) : `${ms(outage.gapMs)}, not recovered`,
              describeRefused(outage.refused),
              outage.kept ? 'kept' : `claimed again (${outage.workerIds})`,
            ],
          ],
          ['left', 'right', 'right', 'right', 'left', 'left'],
        ),
        `A new instance booted right after a restart (${ms(RESTART_DOWN_MS)} down, no other instance running): ` +
          'from the start of `NestFactory.createApplicationContext()` to its first ID. Its claim finds the ' +
          `namespace's data gone and waits for it to settle. ${NEW_INSTANCE_BOOTS} boots:`,
        markdownTable(
          ['boot', 'application context ready', 'first ID'],
          boots.map((b, i) => [String(i + 1), ms(b.bootMs), ms(b.firstIdMs)]),
        ),
      ];
      const targets = [
        {
          name: `time without IDs across a Redis restart (${ms(RESTART_DOWN_MS)} down, data lost), max of ${RESTARTS}`,
          measured: allRecovered ? ms(maxGap) : `${ms(maxGap)}, not recovered`,
          goal: '0 ms',
          pass: allRecovered && maxGap === 0,
        },
        {
          name: `time without IDs across an outage of TTL + ${ms(OUTAGE_DOWN_MS - TTL_MS)}`,
          measured: outage.recovered ? ms(outage.gapMs) : `${ms(outage.gapMs)}, not recovered`,
          goal: 'n/a',
          pass: true,
          verdict: 'report',
        },
        {
          name: 'first ID of an instance booted right after a restart, median',
          measured: `${ms(median(firstIds))} (${ms(Math.min(...firstIds))} to ${ms(Math.max(...firstIds))})`,
          goal: `about the settling (${ms(SETTLE_AFTER_LOSS_MS)})`,
          pass: true,
          verdict: 'report',
        },
      ];
      return { sections, targets };
    } finally {
      await server.stop();
    }
  },
} satisfies Bench;
