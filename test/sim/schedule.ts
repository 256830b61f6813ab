/**
 * Fault schedules as a fast-check arbitrary, so that a failing one shrinks to the fewest, smallest faults that still
 * fail; and the search loop that runs them on a budget, each from its own seed, and reports figures.
 */
import fc from 'fast-check';
import type { EngineName } from './lua/engines.js';
import { describeFigures, noFigures, type SearchFigures } from './report-figures.mjs';
import {
  ID_COUNT,
  redisClockBandMs,
  runSchedule,
  type Fault,
  type PlantedBug,
  type RunResult,
  type Schedule,
  type Violation,
} from './world.js';
import { CANARY_LAYOUTS, type CanaryClocks, type CanaryLayout } from './world-schedule.js';

const FAULT_WINDOW_MS = 30_000;
const KEY_COUNT = 3 + ID_COUNT;

const holder = fc.nat(3);
const at = fc.integer({ min: 0, max: FAULT_WINDOW_MS - 1 });
const shortMs = fc.integer({ min: 50, max: 6000 });
/**
 * How long a holder may go on using the old primary after a failover, behind Sentinels: for any time, since the
 * confirmation fails once a majority names the promoted one, and the holder fences. Without Sentinels no holder keeps
 * the old primary: that split brain is outside what the lease promises (the README's limits), however short. A
 * stale holder's claim there succeeds once a lease there lapsed, on the ID of a holder that moved on and took it back
 * on the promoted side (`redis-topology.spec.ts` shows it with two failovers and a stale view of 5 s).
 */
const MAX_STALE_VIEW_WITH_SENTINELS_MS = 25_000;

/** A failover: the replica's lag, who keeps the old primary and how long, when each Sentinel names the new one. */
function failoverArb(sentinels: boolean): fc.Arbitrary<Fault> {
  return fc.record({
    at,
    kind: fc.constant('failover' as const),
    lagMs: fc.integer({ min: 0, max: 3000 }),
    stale: sentinels ? fc.uniqueArray(holder, { maxLength: 3 }) : fc.constant<number[]>([]),
    staleMs: sentinels ? fc.integer({ min: 0, max: MAX_STALE_VIEW_WITH_SENTINELS_MS }) : fc.constant(0),
    // Hello messages spread a failover within about 2 s; a Sentinel cut off from the others learns it later.
    sentinelDelays: fc.array(fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 20_000 })), {
      minLength: 3,
      maxLength: 3,
    }),
  });
}

/** The kind each entry of {@link faultArbs} generates, in order; then those drawn last. */
export const FAULT_KINDS: Fault['kind'][] = [
  'kill',
  'shutdown',
  'pause',
  'suspend',
  'partition',
  'lossy',
  'wall-step',
  'rate',
  'redis-restart',
  'flushall',
  'delete',
  'deploy',
  'evict',
  'failover',
  'migrate',
  'rollback',
  'redis-clock',
  'reconfigure',
  'redeploy',
  'pressure',
  'redis-pause',
];

/** Kinds drawn after every other part of a schedule (see {@link scheduleArbitrary}), not by {@link faultArbs}. */
const DRAWN_LAST: readonly Fault['kind'][] = ['redis-clock', 'reconfigure', 'redeploy', 'pressure', 'redis-pause'];

/** The TTLs a canary (`reconfigure`) runs with: shorter and longer than the fleet's 3 s, and the contract with them. */
const CANARY_TTLS_MS = [2000, 4000];
/** The TTLs a whole fleet is redeployed with (`redeploy`): the fleet's own too, with either clock numbers. */
const REDEPLOY_TTLS_MS = [2000, 3000, 4000];

const faultArbs: fc.Arbitrary<Fault>[] = [
  fc.record({ at, kind: fc.constant('kill' as const), holder, downMs: fc.integer({ min: 0, max: 8000 }) }),
  fc.record({ at, kind: fc.constant('shutdown' as const), holder, downMs: fc.integer({ min: 0, max: 4000 }) }),
  fc.record({ at, kind: fc.constant('pause' as const), holder, ms: fc.integer({ min: 50, max: 10_000 }) }),
  fc.record({ at, kind: fc.constant('suspend' as const), holder, ms: fc.integer({ min: 50, max: 20_000 }) }),
  fc.record({
    at,
    kind: fc.constant('partition' as const),
    holder,
    ms: shortMs,
    way: fc.constantFrom('both' as const, 'requests' as const, 'replies' as const),
  }),
  fc.record({
    at,
    kind: fc.constant('lossy' as const),
    holder,
    ms: shortMs,
    delayMs: fc.integer({ min: 0, max: 2500 }),
    dropPct: fc.integer({ min: 0, max: 60 }),
    dupPct: fc.integer({ min: 0, max: 30 }),
  }),
  fc.record({
    at,
    kind: fc.constant('wall-step' as const),
    holder,
    byMs: fc.oneof(fc.integer({ min: -400, max: 400 }), fc.integer({ min: -30_000, max: 30_000 })),
  }),
  fc.record({
    at,
    kind: fc.constant('rate' as const),
    holder,
    clock: fc.constantFrom('wall' as const, 'mono' as const),
    ppm: fc.integer({ min: -2000, max: 2000 }),
  }),
  fc.record({
    at,
    kind: fc.constant('redis-restart' as const),
    downMs: fc.integer({ min: 0, max: 3000 }),
    from: fc.oneof(fc.constant('empty' as const), fc.record({ agoMs: fc.integer({ min: 0, max: 20_000 }) })),
  }),
  fc.record({ at, kind: fc.constant('flushall' as const) }),
  fc.record({
    at,
    kind: fc.constant('delete' as const),
    keys: fc.uniqueArray(fc.nat(KEY_COUNT - 1), { minLength: 1, maxLength: KEY_COUNT }),
  }),
  fc.record({
    at,
    kind: fc.constant('deploy' as const),
    offsets: fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 4, maxLength: 4 }),
    downs: fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 4, maxLength: 4 }),
  }),
  fc.record({
    at,
    kind: fc.constant('evict' as const),
    count: fc.integer({ min: 1, max: KEY_COUNT }),
    pressureMs: fc.oneof(fc.constant(0), fc.integer({ min: 100, max: 8000 })),
  }),
  failoverArb(false),
  fc.record({
    at,
    kind: fc.constant('migrate' as const),
    ms: fc.integer({ min: 50, max: 5000 }),
    // Keys per MIGRATE: the namespace's seven keys one by one (a split slot for most of the move) up to all at once.
    batch: fc.integer({ min: 1, max: KEY_COUNT }),
  }),
];

/**
 * A rollback in the same Redis process is seen by each holder at its next renewal only; a claim in between may be
 * handed a live holder's ID (the README says so), so the default search leaves it out and `rollbacks` adds it.
 */
const rollbackArb: fc.Arbitrary<Fault> = fc.record({
  at,
  kind: fc.constant('rollback' as const),
  agoMs: fc.integer({ min: 0, max: 20_000 }),
});

/** A narrower fault mix: only these kinds, up to `maxFaults` of them, with this many processes. */
export interface FaultMix {
  kinds?: readonly Fault['kind'][];
  maxFaults?: number;
  minHolders?: number;
  /** Whether the schedules run behind Sentinels (default: either, drawn per schedule). */
  sentinels?: boolean;
}

export function scheduleArbitrary(options: { rollbacks?: boolean; mix?: FaultMix } = {}): fc.Arbitrary<Schedule> {
  const allowed = (options.mix?.kinds ?? FAULT_KINDS).filter((kind) => kind !== 'rollback' || options.rollbacks);
  const faultsFor = (sentinels: boolean) => {
    const arbs = FAULT_KINDS.filter((kind) => !DRAWN_LAST.includes(kind)).map((kind, i) =>
      kind === 'rollback' ? rollbackArb : kind === 'failover' && sentinels ? failoverArb(true) : faultArbs[i],
    );
    const kinds = arbs.filter((_, i) => allowed.includes(FAULT_KINDS[i]));
    // A mix of only kinds drawn last has none here.
    if (kinds.length === 0) return fc.constant<Fault[]>([]);
    return fc.array(fc.oneof(...kinds), { maxLength: options.mix?.maxFaults ?? 12 });
  };
  // Drawn last, so that they leave every other draw of a seed as it was. The Redis clocks: the skew of each host that
  // serves the namespace in turn, and up to two steps of the serving one, each as a fraction (in 1/500ths, either
  // way) of the band a schedule's holders leave them (redisClockBandMs). And at most one canary, one redeploy, one spell of memory pressure and one paused primary.
  const fraction = fc.integer({ min: -500, max: 500 });
  const upTo = <T>(kind: Fault['kind'], arb: fc.Arbitrary<T>, maxLength: number) =>
    allowed.includes(kind) ? fc.array(arb, { maxLength }) : fc.constant<T[]>([]);
  const drawnLast = fc.record({
    skews: fc.array(fraction, { minLength: 1, maxLength: 3 }),
    steps: upTo('redis-clock', fc.record({ at, to: fraction }), 2),
    canaries: upTo(
      'reconfigure',
      fc.record({
        at,
        kind: fc.constant('reconfigure' as const),
        holder,
        ttlMs: fc.constantFrom(...CANARY_TTLS_MS),
        layout: fc.constantFrom(...(Object.keys(CANARY_LAYOUTS) as CanaryLayout[])),
        clocks: fc.constantFrom<CanaryClocks>('derived', 'narrow'),
      }),
      1,
    ),
    redeploys: upTo(
      'redeploy',
      fc.record({
        at,
        kind: fc.constant('redeploy' as const),
        offsets: fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 4, maxLength: 4 }),
        downMs: fc.integer({ min: 0, max: 400 }),
        ttlMs: fc.constantFrom(...REDEPLOY_TTLS_MS),
        clocks: fc.constantFrom<CanaryClocks>('derived', 'narrow', 'tight'),
        skews: fc.array(fraction, { minLength: 4, maxLength: 4 }),
      }),
      1,
    ),
    pressures: upTo(
      'pressure',
      fc.record({
        at,
        kind: fc.constant('pressure' as const),
        ms: fc.integer({ min: 100, max: 8000 }),
        idleMs: fc.integer({ min: 20, max: 3000 }),
      }),
      1,
    ),
    pauses: upTo(
      'redis-pause',
      fc.record({
        at,
        kind: fc.constant('redis-pause' as const),
        ms: fc.integer({ min: 200, max: 20_000 }),
        // Beyond `ms` in some: a stall the cluster rides out without a promotion.
        promoteAfterMs: fc.integer({ min: 1000, max: 25_000 }),
        // How long it serves on its old data once it runs again, until a message of the cluster demotes it.
        demoteAfterMs: fc.integer({ min: 0, max: 500 }),
      }),
      1,
    ),
  });
  const sentinels = options.mix?.sentinels === undefined ? fc.boolean() : fc.constant(options.mix.sentinels);
  return fc
    .record({
      seed: fc.integer({ min: 1, max: 0x7fffffff }),
      holders: fc.array(fc.record({ skewMs: fc.integer({ min: -100, max: 100 }) }), {
        minLength: options.mix?.minHolders ?? 2,
        maxLength: 4,
      }),
      faultWindowMs: fc.constant(FAULT_WINDOW_MS),
      withSentinels: sentinels.chain((on) => fc.record({ sentinels: fc.constant(on), faults: faultsFor(on) })),
      drawnLast,
      // Without Sentinels: a Redis Cluster, or replicas that an operator or a provider promotes (drawn after the rest).
      plain: fc.boolean(),
    })
    .map(({ withSentinels, drawnLast: { skews, steps, canaries, redeploys, pressures, pauses }, plain, ...rest }) => {
      const band = redisClockBandMs(rest.holders);
      const ms = (fraction: number) => Math.round((fraction * band) / 500);
      const clockSteps = steps.map(({ at, to }): Fault => ({ at, kind: 'redis-clock', toMs: ms(to) }));
      const faults = [...withSentinels.faults, ...clockSteps, ...canaries, ...redeploys, ...pressures, ...pauses];
      // A slot moves and a primary pauses past a vote only on a Cluster (on plain replicas nothing confirms a claim,
      // and a paused primary's claims are a documented limit, docs/lease.md): a schedule with either stays one.
      const clusterOnly = faults.some((f) => f.kind === 'migrate' || f.kind === 'redis-pause');
      const plainReplicas = plain && !withSentinels.sentinels && !clusterOnly;
      return {
        ...rest,
        ...withSentinels,
        faults,
        ...(plainReplicas ? { plainReplicas } : {}),
        redisSkewsMs: skews.map(ms),
      };
    });
}

export interface Found {
  seed: number;
  violation: Violation;
  /** The shortest schedule found that still fails. */
  schedule: Schedule;
  /** Its timeline, replayed with tracing. */
  timeline: string[];
}

/** A search's figures (the same for one process and for the workers' totals) and the failure it found, if any. */
export interface SearchReport extends SearchFigures {
  found: Found | undefined;
}

export interface SearchOptions {
  seconds: number;
  seed: number;
  /**
   * The step between schedule seeds (default 1). Workers searching side by side each take one residue: worker k of N
   * starts at `seed + k` with stride N, so together they run the seeds one worker would, each seed once.
   */
  seedStride?: number;
  maxSchedules?: number;
  bug?: PlantedBug;
  /** Adds same-process rollbacks to the faults (a documented gap: see {@link scheduleArbitrary}). */
  rollbacks?: boolean;
  mix?: FaultMix;
  /** Real seconds spent shrinking a failure at most. */
  shrinkSeconds?: number;
  onProgress?: (report: SearchReport) => void;
  /** The engine that runs the scripts (default: `SIM_LUA`, else compiled). */
  lua?: EngineName;
}

/**
 * Runs schedules from seeds `seed`, `seed + seedStride`, … until the budget is spent or one fails; a failure is shrunk
 * by fast-check (replaying from the same seed gives the same schedule) and replayed with a timeline.
 */
export async function search(options: SearchOptions): Promise<SearchReport> {
  const started = performance.now();
  const report: SearchReport = { ...noFigures(), found: undefined };
  for (let i = 0; ; i++) {
    if (performance.now() - started > options.seconds * 1000) break;
    if (options.maxSchedules !== undefined && report.schedules >= options.maxSchedules) break;
    const seed = options.seed + i * (options.seedStride ?? 1);
    let failed: RunResult | undefined;
    let shrinkUntil = Infinity;
    const property = fc.asyncProperty(
      scheduleArbitrary({ rollbacks: options.rollbacks, mix: options.mix }),
      async (schedule) => {
        if (performance.now() > shrinkUntil) return true;
        const result = await runSchedule(schedule, { bug: options.bug, lua: options.lua });
        if (failed === undefined) {
          report.schedules++;
          report.simulatedMs += result.simulatedMs;
          report.ids += result.ids;
          report.scripts += result.scripts;
          report.pastFence += result.pastFence;
          report.otherLayoutIds += result.otherLayoutIds;
          report.worstRecoveryMs = Math.max(report.worstRecoveryMs, result.worstRecoveryMs);
          for (const [kind, n] of Object.entries(result.faultsByKind)) {
            report.faultsByKind[kind] = (report.faultsByKind[kind] ?? 0) + n;
          }
        }
        if (result.violation === undefined) return true;
        if (failed === undefined) shrinkUntil = performance.now() + (options.shrinkSeconds ?? 60) * 1000;
        failed = result;
        return false;
      },
    );
    const outcome = await fc.check(property, { seed, numRuns: 1 });
    if (outcome.failed && outcome.counterexample !== null) {
      const [schedule] = outcome.counterexample;
      const replay = await runSchedule(schedule, { bug: options.bug, trace: true, lua: options.lua });
      report.found = {
        seed,
        violation: replay.violation ?? failed!.violation!,
        schedule,
        timeline: replay.timeline,
      };
      break;
    }
    options.onProgress?.({ ...report, wallMs: performance.now() - started });
  }
  report.wallMs = performance.now() - started;
  return report;
}

/** The report in words, for the console. */
export function describeReport(report: SearchReport): string {
  const lines = describeFigures(report);
  const found = report.found;
  if (found !== undefined) {
    lines.push(
      '',
      `VIOLATION (${found.violation.kind}) with seed ${found.seed}: ${found.violation.detail}`,
      `shrunk schedule: ${JSON.stringify(found.schedule)}`,
      'timeline (last 80 lines):',
      ...found.timeline.slice(-80),
    );
  }
  return lines.join('\n');
}
