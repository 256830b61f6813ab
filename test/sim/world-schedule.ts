/**
 * What a schedule is: the faults the simulator plays (a plain value, so that fast-check can generate and shrink it),
 * the processes and Redis clocks it starts with, and the settings and bounds the world checks a run against.
 */
import { resolveLayout, type Layout } from '../../lib/core/layout.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { resolveLeaseSettings, type LeaseSettings } from '../../lib/lease/lease.settings.js';

export const TTL_MS = 3000;
export const ID_COUNT = 4;
/** The simulated time every run starts at. */
export const START = Date.UTC(2026, 10, 25, 12);
/** The fleet's layout: four worker IDs, so that capacity is tight and every lost ID shows. */
export const LAYOUT = resolveLayout({ workerBits: 2 }, START);

/**
 * How long after the faults stop every process must issue again: settling after a loss (12 s), a lease left by a
 * killed process running out (one TTL) and the back-off of a claim that found Redis away (one renew interval), a
 * floor wait (maxFloorWaitMs, 2 s), a renewal and a claim that time out (2 × 2 s), and a TTL to spare.
 */
export const LIVENESS_BOUND_MS = SETTLE_AFTER_LOSS_MS + 2 * TTL_MS + 2000 + 2 * 2000;

/**
 * The liveness bound of a schedule: {@link LIVENESS_BOUND_MS}, plus the furthest any wall clock was stepped ahead. A
 * process whose clock ran S ahead issued timestamps up to S in the future, and the ID it held then keeps a floor that
 * far ahead: its next holder may wait up to S for it (the floor rule), and with every other ID held, so may a process
 * that needs one.
 */
export function livenessBoundMs(schedule: Schedule): number {
  let ahead = 0;
  const offsets = new Map<number, number>();
  for (const fault of [...schedule.faults].sort((a, b) => a.at - b.at)) {
    if (fault.kind !== 'wall-step') continue;
    const slot = fault.holder % schedule.holders.length;
    const offset = (offsets.get(slot) ?? 0) + fault.byMs;
    offsets.set(slot, offset);
    ahead = Math.max(ahead, offset);
  }
  // After a canary whose IDs lay above the fleet's (an earlier epoch), the fleet takes its layout back once its IDs
  // pass the canary's: the epoch's difference, the canary's fence margin (at most the fleet's: its TTL is at most
  // 4 s, 1.33 times the fleet's), two clock bounds of the fleet, the claim's spare second and a time unit.
  const behind = schedule.faults.some((fault) => fault.kind === 'reconfigure' && fault.layout === 'epoch-4s-earlier');
  return LIVENESS_BOUND_MS + ahead + (behind ? 4000 + CANARY_MARGIN_MS + 2 * FLEET_CLOCK_BOUND_MS + 1001 : 0);
}

export type Fault =
  /** kill -9; the process starts again (a new process, no memory of the old one) `downMs` later. */
  | { at: number; kind: 'kill'; holder: number; downMs: number }
  /** A graceful shutdown (release), then a new process `downMs` later. */
  | { at: number; kind: 'shutdown'; holder: number; downMs: number }
  /** A rolling deploy: process i shuts down at `at + offsets[i]` and starts again `downs[i]` later. */
  | { at: number; kind: 'deploy'; offsets: number[]; downs: number[] }
  /** SIGSTOP / a long GC / an event-loop stall: nothing runs, the clocks run on. */
  | { at: number; kind: 'pause'; holder: number; ms: number }
  /** The machine sleeps: nothing runs and the monotonic clock stops, while the wall clock runs on. */
  | { at: number; kind: 'suspend'; holder: number; ms: number }
  /** Requests, replies or both are lost for `ms`. */
  | { at: number; kind: 'partition'; holder: number; ms: number; way: 'both' | 'requests' | 'replies' }
  /** A bad network for `ms`: delays up to `delayMs`, drops and duplicated requests (a resend after a reconnect). */
  | { at: number; kind: 'lossy'; holder: number; ms: number; delayMs: number; dropPct: number; dupPct: number }
  /** The wall clock steps by `byMs` (NTP step, an operator); it stays there until the faults stop. */
  | { at: number; kind: 'wall-step'; holder: number; byMs: number }
  /** The wall or monotonic clock runs fast or slow by `ppm` until the faults stop. */
  | { at: number; kind: 'rate'; holder: number; clock: 'wall' | 'mono'; ppm: number }
  /** Redis restarts after `downMs`: empty, or from the snapshot of `agoMs` before (persistence, or a replica). */
  | { at: number; kind: 'redis-restart'; downMs: number; from: 'empty' | { agoMs: number } }
  | { at: number; kind: 'flushall' }
  /** Deletes (or evicts) these keys: 0 meta, 1 cursor, 2 expiry, 3.. records. */
  | { at: number; kind: 'delete'; keys: number[] }
  /** Older data comes back in the same Redis process (run_id and replication ID unchanged). */
  | { at: number; kind: 'rollback'; agoMs: number }
  /**
   * `maxmemory-policy allkeys-lru` under memory pressure: up to `count` of the namespace's keys are evicted, those
   * used longest ago first; then, for `pressureMs` (0: none), the key used longest ago at every step of the
   * simulation, as a server that stays above its `maxmemory` does (a free ID's record, which nothing reads, goes within
   * a step of its release).
   */
  | { at: number; kind: 'evict'; count: number; pressureMs?: number }
  /**
   * The primary paused for `ms` (SIGSTOP, a VM paused, a stall): requests wait in its sockets, and the connections
   * open to it stay with it (no error, no MOVED). After `promoteAfterMs`, if shorter, the cluster promotes its replica
   * (every write: a paused primary takes none), which processes started since reach. When the primary runs again, it
   * runs the waiting requests on its old data; replaced, it serves its clients' next requests there too for
   * `demoteAfterMs` (default 0), until a message of the cluster demotes it; then they are moved to the promoted node.
   */
  | { at: number; kind: 'redis-pause'; ms: number; promoteAfterMs: number; demoteAfterMs?: number }
  /**
   * `maxmemory-policy allkeys-lru` above `maxmemory` for `ms`, with the app's own keys beside the namespace's: at every
   * step, each of the namespace's keys idle for `idleMs` or more is evicted (the app's keys live about that long).
   */
  | { at: number; kind: 'pressure'; ms: number; idleMs: number }
  /**
   * Sentinel promotes the replica, which lags `lagMs` behind the primary: the writes of the last `lagMs` (scripts that
   * already answered) are lost, and the promoted process has its own run_id and replication ID. The holders in
   * `stale` were told the old primary (a Sentinel view that lags, a connection that stays up) and keep using it
   * for `staleMs` (with Sentinels: until a confirmation tells them otherwise), while the others use the promoted one
   * at once. Sentinel i names the promoted one `sentinelDelays[i]` after the promotion (default at once).
   */
  | { at: number; kind: 'failover'; lagMs: number; stale: number[]; staleMs: number; sentinelDelays?: number[] }
  /**
   * Redis Cluster moves the namespace's slot to another node over `ms`, as `redis-cli --cluster reshard` does: the
   * slot is marked migrating and importing, its keys move `batch` at a time (MIGRATE, in the order a key scan finds
   * them), the batches spread over `ms`, then the new node owns the slot (another run_id, the same data). Meanwhile a
   * script reaches the old node (ioredis's slot map) and runs there while every key it declares is there; otherwise it
   * is told ASK, and ioredis sends it with ASKING to the new node, which runs it when every key it declares has moved
   * there and answers TRYAGAIN otherwise (keys split, or a key that exists on neither: a record not yet written);
   * ioredis sends a TRYAGAIN again 100 ms later to a random primary of three, which answers MOVED unless it is the
   * owner. Once the slot is the new node's, a process still told the old one is answered MOVED once. Each redirection
   * costs a round trip; ioredis follows 16 and fails the 17th ("Too many Cluster redirections").
   */
  | { at: number; kind: 'migrate'; ms: number; batch: number }
  /**
   * The clock of the Redis host serving the namespace steps to `toMs` from the true time (NTP on that host), staying
   * within the band every Redis clock of the schedule keeps (see {@link Schedule.redisSkewsMs}).
   */
  | { at: number; kind: 'redis-clock'; toMs: number }
  /**
   * A canary: the holder's process shuts down and one with another contract (`ttlMs`, and the fence margin and clock
   * bounds derived from it) starts in its place at once; when the faults stop, it is rolled back to the fleet's.
   */
  | { at: number; kind: 'reconfigure'; holder: number; ttlMs: number; layout?: CanaryLayout; clocks?: CanaryClocks }
  /**
   * A redeploy of the whole fleet with another contract (`ttlMs`, clock numbers), with Kubernetes's `Recreate`
   * strategy: process i shuts down gracefully at `at + offsets[i]`, and `downMs` after the last of them the processes
   * with the new contract start; when the faults stop, each is
   * rolled back to the fleet's, as a canary is. With every lease released, the namespace takes the new contract at
   * once (guarantee 8), so a narrower contract meets the IDs the old one left, with whatever lead its clocks allowed.
   */
  | {
      at: number;
      kind: 'redeploy';
      offsets: number[];
      downMs: number;
      ttlMs: number;
      clocks: CanaryClocks;
      /**
       * The redeployed processes run on other machines: process i's wall clock is off the serving Redis host's by
       * `skews[i]` 500ths of what the new contract's clock bound allows (see {@link redeployedSkewMs}).
       */
      skews: number[];
    };

/**
 * The layout a canary runs with ({@link CANARY_LAYOUTS}): the fleet's, or one whose IDs lie among the fleet's (an
 * epoch 4 s or 60 s later, a coarser unit, the worker and sequence fields split otherwise) or above them (an epoch
 * 4 s earlier). The namespace takes a layout only once no lease is live, and then only when its IDs lie above every
 * ID the old one may have issued; the checks compare IDs of every layout as 64-bit numbers.
 */
export type CanaryLayout = 'fleet' | 'fields' | 'epoch-4s-earlier' | 'epoch-4s-later' | 'epoch-60s-later' | 'unit-10ms';

/** What each {@link CanaryLayout} changes in the fleet's layout. */
export const CANARY_LAYOUTS: Record<CanaryLayout, Layout> = {
  fleet: LAYOUT,
  fields: resolveLayout({ workerBits: 3, sequenceBits: LAYOUT.sequenceBits - 1 }, START),
  'epoch-4s-earlier': resolveLayout({ workerBits: 2, epoch: LAYOUT.epoch - 4000 }, START),
  'epoch-4s-later': resolveLayout({ workerBits: 2, epoch: LAYOUT.epoch + 4000 }, START),
  'epoch-60s-later': resolveLayout({ workerBits: 2, epoch: LAYOUT.epoch + 60_000 }, START),
  'unit-10ms': resolveLayout({ workerBits: 2, timeUnitMs: 10 }, START),
};

export interface HolderSpec {
  /** Constant wall-clock offset from the true time, ms. */
  skewMs: number;
  /** Another contract (a canary with a shorter TTL): the namespace refuses it while others hold leases. */
  ttlMs?: number;
  /** Starts this long after the beginning (default at once). */
  startAtMs?: number;
}

export interface Schedule {
  /** Drives the network's delays and drops and how many IDs each process asks for. */
  seed: number;
  holders: HolderSpec[];
  faults: Fault[];
  /** Faults happen within [0, faultWindowMs); after it everything heals, and the liveness clock starts. */
  faultWindowMs: number;
  /**
   * Redis behind three Sentinels: every claim and renewal is confirmed by the lease's own SentinelConfirm against
   * simulated Sentinels, whose views of the master lag (`sentinelDelays` of a failover; a new run_id at the same
   * address is learnt within 10 s, as from INFO), and a connection told it is on the wrong master reconnects.
   */
  sentinels?: boolean;
  /**
   * Without Sentinels, replicas that an operator or a provider promotes rather than a Redis Cluster: nothing confirms
   * a claim. By default a schedule without Sentinels runs on a Cluster, whose primaries the lease's own
   * ClusterConfirm asks at each claim (cluster-nodes.ts).
   */
  plainReplicas?: boolean;
  /**
   * The clocks of the Redis hosts that serve the namespace in turn, ms from the true time: the first primary, then
   * each failover's promoted replica and each slot move's new node take the next one (round the list); a restart
   * keeps its host's clock. The schedules keep them within the README's assumption (the Redis servers' clocks agree
   * within `maxClockOffsetMs`) and close enough to every holder's clock for it to issue: see
   * {@link redisClockBandMs}. Default: every Redis clock at the true time.
   */
  redisSkewsMs?: number[];
}

/**
 * The clock numbers a canary runs with: derived from its TTL, as the fleet's are, or narrow ones set explicitly
 * ({@link NARROW_CLOCKS}: a clock bound of 63 ms against the fleet's 148). A narrower contract taken right after the
 * fleet stopped gracefully must wait out the old holders' lead before it hands out an ID whose record is gone
 * (guarantee 7): its own margin does not cover a lead the old contract allowed.
 */
export type CanaryClocks = 'derived' | 'narrow' | 'tight';

/** Clock numbers set explicitly: `narrow` a clock bound of 63 ms, `tight` one of 15 ms (the fleet's is 148). */
const EXPLICIT_CLOCKS = {
  narrow: { fenceMarginMs: 150, clockBackToleranceMs: 20 },
  tight: { fenceMarginMs: 40, clockBackToleranceMs: 5 },
};

/** The simulated processes' lease settings with the simulator's TTL (another `ttlMs`, or clock numbers, for a canary). */
export function simSettings(ttlMs = TTL_MS, layout = LAYOUT, clocks: CanaryClocks = 'derived'): LeaseSettings {
  const options = { url: 'redis://sim', namespace: 'sim', ttlMs, retryBackoffMs: 100 };
  if (clocks === 'derived') return resolveLeaseSettings(options, layout);
  const { fenceMarginMs, clockBackToleranceMs } = EXPLICIT_CLOCKS[clocks];
  return resolveLeaseSettings({ ...options, fenceMarginMs }, layout, clockBackToleranceMs);
}

/** What a holder's measured offset from a Redis clock may carry on a healthy link: half a round trip of up to 8 ms. */
const OFFSET_ERROR_ALLOWANCE_MS = 10;

/** The fleet's `maxClockOffsetMs`, resolved once rather than for every schedule drawn. */
const FLEET_CLOCK_BOUND_MS = simSettings().maxClockOffsetMs;
/** The widest fence margin a canary runs with (its TTL at most 4 s). */
const CANARY_MARGIN_MS = simSettings(4000).fenceMarginMs;

/**
 * The wall clock of a process a `redeploy` moved to another machine: off the serving Redis host's clock by `fraction`
 * 500ths (either way) of the new contract's clock bound less the measurement allowance, so that it issues; and, like
 * every holder's, no farther from the true time than leaves the schedule's Redis clocks their band.
 */
export function redeployedSkewMs(
  holders: readonly HolderSpec[],
  redisOffsetMs: number,
  settings: LeaseSettings,
  fraction: number,
): number {
  const within = Math.max(0, settings.maxClockOffsetMs - OFFSET_ERROR_ALLOWANCE_MS);
  const farthest = FLEET_CLOCK_BOUND_MS - OFFSET_ERROR_ALLOWANCE_MS - redisClockBandMs(holders);
  const skew = redisOffsetMs + Math.round((fraction * within) / 500);
  return Math.max(-farthest, Math.min(farthest, skew));
}

/**
 * How far from the true time (either way) a schedule's Redis clocks may be: so that any two agree within
 * `maxClockOffsetMs` (the README's assumption), and every holder's wall clock, once the faults stop, is within
 * `maxClockOffsetMs` of each of them with its measurement error to spare, so that it issues.
 */
export function redisClockBandMs(holders: readonly HolderSpec[]): number {
  const bound = FLEET_CLOCK_BOUND_MS;
  const farthest = Math.max(0, ...holders.map((holder) => Math.abs(holder.skewMs)));
  return Math.max(0, Math.min(Math.floor(bound / 2), bound - OFFSET_ERROR_ALLOWANCE_MS - farthest));
}
