/**
 * The lease simulator's world: N simulated processes, each running the real lease (RedisWorkerSource with its claim
 * loop, renewal timer, give-back and permit), WorkerBinding, SnowflakeGenerator and IdService, with clocks of its own
 * (wall and monotonic), a network of its own to a Redis model that runs the project's Lua scripts, all on simulated
 * time. A schedule of faults (a plain value, so fast-check can generate and shrink it) is played against it, and
 * every issued ID is checked as it comes out.
 *
 * Checked on every ID:
 * - uniqueness across all processes;
 * - order per worker ID across processes: every ID issued under a worker ID is above every ID issued under it
 *   before, by anyone (the floor, ceiling, fence and settling rules together promise this; a duplicate is the
 *   worst case of breaking it, an ID below an earlier one is the warning that a duplicate was possible).
 * Checked at the end: liveness, every process issued again within {@link livenessBoundMs} of the faults stopping.
 *
 * Redis faults modelled: restart (empty or from a snapshot), FLUSHALL, deletion of any keys, eviction in LRU order,
 * a rollback in the same process, promotion of a lagging replica (the writes of the lag lost after their scripts
 * answered) with some holders told the old primary for a while (a split brain), and a Redis Cluster slot migration as
 * the client sees it (the keys move in batches; a script whose keys are not all on the old node is redirected with ASK
 * to the new one, which runs it once they are all there and answers TRYAGAIN until then; MOVED once the slot is the
 * new node's; ioredis follows each, and gives up after 16). Each Redis host's clock is off the true time by the
 * schedule's skew for it, and steps within the same band (the README assumes the Redis servers' clocks agree within
 * `maxClockOffsetMs`). With `sentinels`, the lease's own SentinelConfirm confirms every claim and renewal against
 * three simulated Sentinels whose views of the master lag; without, a split brain is kept below the settling by the
 * schedule generator.
 *
 * What it does not model: replication as a stream (the replica is the primary's snapshot of `lagMs` before), WAIT,
 * NOSCRIPT on a node that has not seen a script yet (ioredis sends EVAL after EVALSHA: one more round trip),
 * Redis's sampled LRU (eviction takes keys in exact LRU order), Redis clocks beyond the assumption, timers that run on a
 * process's own (skewed) monotonic clock (timers fire on the simulation's true time; the clocks the code reads are
 * the skewed ones), and the event loop of a paused process (its timers still fire during the pause; its round trips
 * and its ID requests wait until it resumes).
 */
import type { Clock } from '../../lib/core/clock.js';
import { WorkerUnavailableError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { LeaseConnectionError } from '../../lib/lease/redis/lease.client.js';
import { SETTLE_AFTER_LOSS_MS } from '../../lib/lease/lease.contract.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from '../../lib/lease/redis/lease.scripts.js';
import { resolveLeaseSettings, type LeaseSettings } from '../../lib/lease/lease.settings.js';
import type { RedisClientLike } from '../../lib/lease/lease.options.js';
import type { SearchFigures } from './report-figures.mjs';
import { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import { SentinelConfirm } from '../../lib/lease/redis/sentinel.confirm.js';
import { IdService } from '../../lib/module/id.service.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import type { WorkerAssignment, WorkerIdSource, WorkerSourceContext } from '../../lib/worker/worker-source.js';
import { mulberry32 } from '../support/seeded-random.js';
import { scriptEngine, type EngineName } from './lua/engines.js';
import { RedisModel, type NodeIdentity, type Reply, type Snapshot } from './redis-model.js';
import { SimBackend, type ReplyTamper, type ScriptName, type SimLink } from './sim-backend.js';
import { SimTime, TimerStorm } from './sim-time.js';

export const TTL_MS = 3000;
export const ID_COUNT = 4;
const START = Date.UTC(2026, 10, 25, 12);
/** How often the processes are asked for IDs and faults are applied (SIM_STEP_MS to change it). */
const STEP_MS = Number(process.env.SIM_STEP_MS ?? 20);
const SNAPSHOT_EVERY_MS = 200;
const RESTART_AFTER_FAILED_BOOT_MS = 1000;
const LAYOUT = resolveLayout({ workerBits: 2 }, START);

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
  return LIVENESS_BOUND_MS + ahead;
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
   * used longest ago first.
   */
  | { at: number; kind: 'evict'; count: number }
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
  | { at: number; kind: 'reconfigure'; holder: number; ttlMs: number };

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
   * The clocks of the Redis hosts that serve the namespace in turn, ms from the true time: the first primary, then
   * each failover's promoted replica and each slot move's new node take the next one (round the list); a restart
   * keeps its host's clock. The schedules keep them within the README's assumption (the Redis servers' clocks agree
   * within `maxClockOffsetMs`) and close enough to every holder's clock for it to issue: see
   * {@link redisClockBandMs}. Default: every Redis clock at the true time.
   */
  redisSkewsMs?: number[];
}

/** The simulated processes' lease settings with the simulator's TTL (another `ttlMs` for a canary). */
export function simSettings(ttlMs = TTL_MS): LeaseSettings {
  return resolveLeaseSettings({ url: 'redis://sim', namespace: 'sim', ttlMs, retryBackoffMs: 100 }, LAYOUT);
}

/** What a holder's measured offset from a Redis clock may carry on a healthy link: half a round trip of up to 8 ms. */
const OFFSET_ERROR_ALLOWANCE_MS = 10;

/**
 * How far from the true time (either way) a schedule's Redis clocks may be: so that any two agree within
 * `maxClockOffsetMs` (the README's assumption), and every holder's wall clock, once the faults stop, is within
 * `maxClockOffsetMs` of each of them with its measurement error to spare, so that it issues.
 */
export function redisClockBandMs(holders: readonly HolderSpec[]): number {
  const bound = simSettings().maxClockOffsetMs;
  const farthest = Math.max(0, ...holders.map((holder) => Math.abs(holder.skewMs)));
  return Math.max(0, Math.min(Math.floor(bound / 2), bound - OFFSET_ERROR_ALLOWANCE_MS - farthest));
}

/** Bugs planted through test-only seams, to show the checks catch them. */
export type PlantedBug =
  'floor' | 'fence' | 'fence-and-ceiling' | 'settling' | 'recovery-proof' | 'clock-check' | PreFixBehaviour;

/**
 * The scripts as they behaved before the fix of each known hole, re-created as patches of today's scripts (the
 * library around them changed too much since for `git checkout <commit> -- lib` to run in the simulator):
 * - `settle-one-ttl`: a new marker settles for the TTL of whoever created it (before 2f55e85: a canary with a
 *   shorter TTL shortened the settling);
 * - `missing-record-resettles`: a claim that meets a free ID without its record starts a new marker and settles
 *   again (before 2f55e85: deleting records again and again kept the namespace settling);
 * - `no-rollback-check`: a renewal does not compare the record's revision, nor tell a live lease handed out again
 *   (before 2f55e85: a rollback in the same process went unseen);
 * - `cursor-kept`: a lost expiry set leaves the cursor where it was (before a65b0a9, found by the simulator);
 * - `cursor-kept-without-meta`: a lost expiry set leaves the cursor where it was when the meta, whose mirror counts
 *   the set's members, was lost with it (found by the simulator after a65b0a9, fixed since);
 * - `contract-not-held-back`: IDs held back after a loss neither record their holders' contract nor refuse a claim
 *   with another (found once the search drew canaries, fixed since).
 */
export type PreFixBehaviour =
  | 'settle-one-ttl'
  | 'missing-record-resettles'
  | 'no-rollback-check'
  | 'cursor-kept'
  | 'cursor-kept-without-meta'
  | 'contract-not-held-back';

export interface Violation {
  kind: 'duplicate' | 'order' | 'liveness' | 'crash';
  atMs: number;
  detail: string;
}

/** One schedule's run: the figures a search adds up (see report-figures), its violation, and its timeline if traced. */
export interface RunResult extends Omit<SearchFigures, 'schedules' | 'wallMs'> {
  violation: Violation | undefined;
  timeline: string[];
}

export interface RunOptions {
  bug?: PlantedBug;
  /** Keeps a readable timeline (slower). */
  trace?: boolean;
  /** Holders exempt from the liveness check (a canary the namespace refuses). */
  livenessExempt?: readonly number[];
  /** The engine that runs the scripts (default: `SIM_LUA`, else compiled). */
  lua?: EngineName;
}

/** The planted bugs' patched scripts: settling never lasts, a lapsed lease counts as proof. */
function scriptsFor(bug: PlantedBug | undefined): Record<ScriptName, string> {
  const scripts = { claim: CLAIM_SCRIPT, renew: RENEW_SCRIPT, release: RELEASE_SCRIPT, note: NOTE_SCRIPT };
  if (bug === 'settling') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(scripts[name], `local SETTLE = ${SETTLE_AFTER_LOSS_MS}`, 'local SETTLE = 0');
    }
  }
  if (bug === 'settle-one-ttl') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(scripts[name], "'settleMs', SETTLE,", "'settleMs', TTL,");
    }
  }
  if (bug === 'missing-record-resettles') {
    scripts.claim = patch(
      scripts.claim,
      'elseif lapsed ~= nil and lapsed + MARGIN > now then',
      "elseif lapsed ~= nil then\n  new_marker()\n  do return {'settling', settling_left(), now, server} end",
    );
  }
  if (bug === 'no-rollback-check') {
    scripts.renew = patch(scripts.renew, 'elseif owner == token and not known(', 'elseif false and not known(');
    scripts.renew = patch(scripts.renew, 'elseif owner ~= token and unlapsed then', 'elseif false then');
  }
  if (bug === 'cursor-kept') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(
        scripts[name],
        "if not members or redis.call('ZCARD', EXPIRY) < tonumber(members) then",
        'if false then',
      );
    }
  }
  if (bug === 'cursor-kept-without-meta') {
    for (const name of Object.keys(scripts) as ScriptName[]) {
      scripts[name] = patch(
        scripts[name],
        "if not members or redis.call('ZCARD', EXPIRY) < tonumber(members) then",
        "if redis.call('ZCARD', EXPIRY) < tonumber(members or '0') then",
      );
    }
  }
  if (bug === 'contract-not-held-back') {
    scripts.claim = patch(scripts.claim, 'if recorded and live + held_back > 0 then', 'if recorded and live > 0 then');
    scripts.renew = patch(
      scripts.renew,
      "if redis.call('HGET', META, 'confirmed') ~= '1' then redis.call('HSET', META, 'config', CONFIG) end",
      '',
    );
  }
  if (bug === 'recovery-proof') {
    scripts.renew = patch(
      scripts.renew,
      'local unlapsed = now + proof_margin < previous_expiry',
      'local unlapsed = true',
    );
  }
  return scripts;
}

function patch(script: string, from: string, to: string): string {
  if (!script.includes(from)) throw new Error(`planted bug: "${from}" not found in the script`);
  return script.split(from).join(to);
}

/** A process's clocks: the true time with an offset, a rate error and steps; the monotonic one may stop. */
class SimClock implements Clock {
  private wallBase: number;
  private wallAt: number;
  wallPpm = 0;
  private monoBase = 0;
  private monoAt: number;
  monoPpm = 0;
  private frozen = false;

  constructor(
    private readonly trueNow: () => number,
    readonly skewMs: number,
  ) {
    this.wallAt = this.monoAt = trueNow();
    this.wallBase = this.wallAt + skewMs;
  }

  now(): number {
    const t = this.trueNow();
    return Math.floor(this.wallBase + (t - this.wallAt) * (1 + this.wallPpm / 1e6));
  }

  monotonicNow(): number {
    if (this.frozen) return this.monoBase;
    const t = this.trueNow();
    return this.monoBase + (t - this.monoAt) * (1 + this.monoPpm / 1e6);
  }

  step(byMs: number): void {
    this.rebase();
    this.wallBase += byMs;
  }

  setRate(clock: 'wall' | 'mono', ppm: number): void {
    this.rebase();
    if (clock === 'wall') this.wallPpm = ppm;
    else this.monoPpm = ppm;
  }

  freeze(frozen: boolean): void {
    this.rebase();
    this.frozen = frozen;
  }

  /** Back to the true time plus the constant skew, at the true rate (NTP after the faults). */
  heal(): void {
    this.frozen = false;
    this.rebase();
    this.wallBase = this.trueNow() + this.skewMs;
    this.wallPpm = this.monoPpm = 0;
  }

  private rebase(): void {
    const t = this.trueNow();
    this.wallBase = this.now();
    this.wallAt = t;
    this.monoBase = this.monotonicNow();
    this.monoAt = t;
  }
}

/** The conditions of one machine's link to Redis; they outlive the processes on it. */
interface LinkState {
  requestsCutUntil: number;
  repliesCutUntil: number;
  lossyUntil: number;
  delayMs: number;
  dropPct: number;
  dupPct: number;
}

interface Holder {
  slot: number;
  spec: HolderSpec;
  clock: SimClock;
  link: LinkState;
  incarnation: number;
  process: SimProcess | undefined;
  pausedUntil: number;
  /** Callbacks waiting for the process to run again. */
  onResume: (() => void)[];
  /** The old primary this holder's connection still reaches after a failover, until `staleUntil`. */
  staleServer: RedisModel | undefined;
  staleUntil: number;
  /** First ID issued after the faults stopped (true ms), for the liveness check. */
  issuedAfterHeal: number | undefined;
  restartAt: number | undefined;
  /** The TTL of another contract its processes run with (a `reconfigure` canary), until the faults stop. */
  canaryTtlMs: number | undefined;
}

interface SimProcess {
  name: string;
  ids: IdService;
  state: 'starting' | 'running' | 'failed' | 'dead' | 'stopped';
  dead: boolean;
  /** The slot moves its cluster client knows of (ioredis's slot map): fewer than the world's, and the old node answers MOVED. */
  slotMap: number;
  /** The worker (datacenter and worker ID, as {@link workerSlot} numbers it) of the last ID it issued. */
  lastWorker: number | undefined;
  lastRefusal: string | undefined;
}

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** Runs one schedule on simulated time (it installs the simulated timers for the run and removes them after). */
export async function runSchedule(schedule: Schedule, options: RunOptions = {}): Promise<RunResult> {
  const time = new SimTime(START);
  await time.yieldToEventLoop();
  time.install();
  // The lease refuses IDs with typed errors many times per schedule, and a stack trace costs more than the rest of
  // the refusal; a traced replay (as every failure gets) keeps them.
  const stackTraceLimit = Error.stackTraceLimit;
  if (options.trace !== true) Error.stackTraceLimit = 0;
  try {
    return await new World(schedule, options, time).run();
  } finally {
    // Let what the teardown started run on simulated time, so that none of it reaches a real timer.
    await time.advanceTo(time.now()).catch(() => undefined);
    time.uninstall();
    Error.stackTraceLimit = stackTraceLimit;
    // Each simulated process's history lives in the process-wide registry under its own name; start clean.
    delete (globalThis as Record<symbol, unknown>)[Symbol.for('nestjs-snowflake.process-workers')];
  }
}

class World {
  private readonly random: () => number;
  /** Draws of the Redis Cluster model (key order, random primaries), apart from the network's and the processes'. */
  private readonly clusterRandom: () => number;
  /** The primary: the Redis process the holders' connections reach (but for stale ones after a failover). */
  private model: RedisModel;
  /** Redis processes started so far (each a seed for its identity). */
  private nodes = 0;
  /** Redis hosts that served the namespace so far, after the first (failovers and slot moves). */
  private hostChanges = 0;
  private scriptsRun = 0;
  /** IDs a planted fence bug let through past the fence. */
  private pastFence = 0;
  /** What each Sentinel names as the master (with Sentinels). */
  private readonly sentinelViews: SentinelView[] = [];
  private masterAddress = 'node0';
  /** The Sentinels' configuration epoch: each failover raises it. */
  private epoch = 1;
  /** A slot migration under way: the importing node, the keys moved to it so far. */
  private migration: Migration | undefined;
  /** Slot migrations finished so far (a process that knows of fewer asks the old node first). */
  private slotMoves = 0;
  private readonly scripts: Record<ScriptName, string>;
  private readonly holders: Holder[];
  private readonly snapshots: { at: number; snapshot: Snapshot }[] = [];
  private readonly timeline: string[] = [];
  /** Every ID issued so far under each worker, in the order issued, and who issued the last, by {@link workerSlot}. */
  private readonly byWorker: WorkerHistory[] = [];
  private readonly faultsByKind: Record<string, number> = {};
  private readonly keyNames: string[];
  private redisDownUntil = 0;
  private violation: Violation | undefined;
  private idCount = 0;
  private healed = false;

  constructor(
    private readonly schedule: Schedule,
    private readonly options: RunOptions,
    private readonly time: SimTime,
  ) {
    this.random = mulberry32(schedule.seed);
    this.clusterRandom = mulberry32((schedule.seed * 4099 + 17) >>> 0);
    this.model = new RedisModel(() => time.now(), schedule.seed, scriptEngine(options.lua));
    this.model.clockOffsetMs = this.hostSkewMs(0);
    for (let i = 0; i < SENTINELS; i++)
      this.sentinelViews.push({ runId: this.model.runId, address: 'node0', epoch: 1 });
    this.scripts = scriptsFor(options.bug);
    this.holders = schedule.holders.map((spec, slot) => ({
      slot,
      spec,
      clock: new SimClock(() => time.now(), spec.skewMs),
      link: { requestsCutUntil: 0, repliesCutUntil: 0, lossyUntil: 0, delayMs: 0, dropPct: 0, dupPct: 0 },
      incarnation: 0,
      process: undefined,
      pausedUntil: 0,
      onResume: [],
      staleServer: undefined,
      staleUntil: 0,
      issuedAfterHeal: undefined,
      restartAt: spec.startAtMs === undefined ? 0 : spec.startAtMs,
      canaryTtlMs: undefined,
    }));
    const keys = leaseKeys(this.settingsFor(TTL_MS), 0);
    this.keyNames = [keys.meta, keys.cursor, keys.expiry, ...range(ID_COUNT).map((i) => keys.recordPrefix + i)];
  }

  private get t(): number {
    return this.time.now() - START;
  }

  /** The clock of the i-th Redis host to serve the namespace ({@link Schedule.redisSkewsMs}). */
  private hostSkewMs(i: number): number {
    const skews = this.schedule.redisSkewsMs ?? [];
    return skews.length === 0 ? 0 : skews[i % skews.length];
  }

  /**
   * The lease draws its tokens from `randomUUID()` (only ever compared for equality); the timeline names each by the
   * order it first appeared in, so that a replay's timeline is the same line for line.
   */
  private readonly tokenNames = new Map<string, string>();

  private log(line: string): void {
    if (!this.options.trace) return;
    const named = line.replace(UUID, (token) => {
      let name = this.tokenNames.get(token);
      if (name === undefined) this.tokenNames.set(token, (name = `token${this.tokenNames.size + 1}`));
      return name;
    });
    this.timeline.push(`${String(this.t).padStart(6)} ms  ${named}`);
  }

  async run(): Promise<RunResult> {
    const faults = [...this.schedule.faults].sort((a, b) => a.at - b.at);
    const endMs = this.schedule.faultWindowMs + livenessBoundMs(this.schedule);
    const ends: { at: number; run: () => void }[] = [];
    let nextSnapshot = 0;
    for (let t = 0; t <= endMs && this.violation === undefined && !this.allBackSince(t); t += STEP_MS) {
      if (t >= nextSnapshot) {
        this.snapshots.push({ at: t, snapshot: this.model.snapshot() });
        if (this.snapshots.length > 200) this.snapshots.shift();
        nextSnapshot = t + SNAPSHOT_EVERY_MS;
      }
      while (faults.length > 0 && faults[0].at <= t) this.apply(faults.shift()!, ends);
      for (let i = ends.length - 1; i >= 0; i--) {
        if (ends[i].at <= t) ends.splice(i, 1)[0].run();
      }
      if (!this.healed && t >= this.schedule.faultWindowMs) this.heal();
      for (const holder of this.holders) {
        if (holder.restartAt !== undefined && holder.restartAt <= t && !this.isPaused(holder)) this.start(holder);
        this.issue(holder);
      }
      try {
        await this.time.advanceTo(START + t + STEP_MS);
      } catch (error) {
        if (!(error instanceof TimerStorm)) throw error;
        this.fail('liveness', error.message);
      }
    }
    if (this.violation === undefined) this.checkLiveness();
    let worstRecoveryMs = 0;
    for (const holder of this.holders) {
      if (holder.issuedAfterHeal !== undefined) {
        worstRecoveryMs = Math.max(worstRecoveryMs, holder.issuedAfterHeal - this.schedule.faultWindowMs);
      }
    }
    for (const holder of this.holders) this.teardown(holder);
    return {
      violation: this.violation,
      simulatedMs: this.t,
      ids: this.idCount,
      scripts: this.scriptsRun,
      pastFence: this.pastFence,
      faultsByKind: this.faultsByKind,
      worstRecoveryMs,
      timeline: this.timeline,
    };
  }

  /** Every process issued again after the faults stopped, and three TTLs passed since they stopped. */
  private allBackSince(t: number): boolean {
    if (!this.healed || t < this.schedule.faultWindowMs + 3 * TTL_MS) return false;
    const exempt = new Set(this.options.livenessExempt ?? []);
    return this.holders.every((holder) => exempt.has(holder.slot) || holder.issuedAfterHeal !== undefined);
  }

  // ---- processes -------------------------------------------------------------------------------------------------

  private settingsFor(ttlMs: number): LeaseSettings {
    return simSettings(ttlMs);
  }

  private start(holder: Holder): void {
    holder.restartAt = undefined;
    const name = `h${holder.slot}#${++holder.incarnation}`;
    const settings = this.settingsFor(holder.canaryTtlMs ?? holder.spec.ttlMs ?? TTL_MS);
    const tamper: ReplyTamper = {
      dropFloor: this.options.bug === 'floor',
      serverTimeIs: this.options.bug === 'clock-check' ? () => holder.clock.now() : undefined,
    };
    const process: SimProcess = {
      name,
      ids: undefined as unknown as IdService,
      state: 'starting',
      dead: false,
      slotMap: this.slotMoves,
      lastWorker: undefined,
      lastRefusal: undefined,
    };
    const link: SimLink = { run: (script, keys, args) => this.roundTrip(holder, process, script, keys, args) };
    const sentinel = this.schedule.sentinels ? this.sentinelsFor(holder, process) : undefined;
    // The lease's pick of which free ID a contended claim tries, from a stream of its own seeded by the schedule:
    // a replay makes the same picks, and the world's own draws (faults, delays) stay as they were.
    const picks = mulberry32((this.schedule.seed * 7919 + holder.slot * 131 + holder.incarnation) >>> 0);
    let source: WorkerIdSource = new RedisWorkerSource(
      settings,
      0,
      (s, keys) => Promise.resolve(new SimBackend(link, s, keys, name, holder.incarnation, tamper, sentinel)),
      picks,
    );
    if (this.options.bug === 'fence' || this.options.bug === 'fence-and-ceiling') {
      source = new FenceIgnored(source as RedisWorkerSource, this.options.bug === 'fence', () => this.pastFence++);
    }
    const generator = new SnowflakeGenerator({
      layout: LAYOUT,
      clock: holder.clock,
      clockBackToleranceMs: settings.clockBackToleranceMs,
      maxSyncWaitMs: 0,
    });
    process.ids = new IdService(new WorkerBinding(generator, source, LAYOUT, holder.clock, quiet));
    holder.process = process;
    this.log(`${name} starts (wall ${holder.clock.now() - this.time.now()} ms off)`);
    process.ids.onModuleInit().then(
      () => {
        if (process.state === 'starting') process.state = 'running';
      },
      (error: unknown) => {
        if (process.state !== 'starting') return;
        process.state = 'failed';
        this.log(`${name} failed to start: ${error instanceof Error ? error.message.slice(0, 160) : String(error)}`);
        if (holder.process === process) holder.restartAt = this.t + RESTART_AFTER_FAILED_BOOT_MS;
      },
    );
  }

  private issue(holder: Holder): void {
    const process = holder.process;
    if (process === undefined || process.state !== 'running' || this.isPaused(holder)) return;
    const count = Math.floor(this.random() * 3);
    for (let i = 0; i < count; i++) {
      let id: bigint;
      try {
        id = process.ids.next();
      } catch (error) {
        const reason = error instanceof WorkerUnavailableError ? error.reason : (error as Error).name;
        if (reason !== process.lastRefusal) this.log(`${process.name} refused: ${reason}`);
        process.lastRefusal = reason;
        if (!(error instanceof WorkerUnavailableError) && !/ClockMovedBack|SequenceExhausted/.test(reason)) {
          this.fail('crash', `${process.name}: next() threw ${(error as Error).stack ?? String(error)}`);
        }
        return;
      }
      process.lastRefusal = undefined;
      this.check(holder, process, id);
      if (this.violation !== undefined) return;
    }
  }

  /**
   * Uniqueness and order per worker, on every ID. Until the first violation every ID under a worker is above all the
   * earlier ones, so the last is the highest: an ID above it is new (no set lookup needed), and only an ID at or below
   * it is looked up among the earlier ones, to tell a duplicate from an ID out of order.
   */
  private check(holder: Holder, process: SimProcess, id: bigint): void {
    this.idCount++;
    const slot = workerSlot(id);
    if (slot !== process.lastWorker) {
      if (this.options.trace) {
        this.log(`${process.name} issues as worker ${workerOf(id)} from ${process.ids.decode(id).timestamp} (${id})`);
      }
      process.lastWorker = slot;
    }
    if (this.healed && holder.issuedAfterHeal === undefined) holder.issuedAfterHeal = this.t;
    let history = this.byWorker[slot];
    if (history === undefined) {
      history = this.byWorker[slot] = { ids: [], last: -1n, by: '', at: 0 };
    } else if (id <= history.last) {
      const worker = workerOf(id);
      if (history.ids.includes(id)) {
        this.fail('duplicate', `${process.name} issued ${id} (worker ${worker}) again; last under it by ${history.by}`);
        return;
      }
      const parts = process.ids.decode(id);
      const before = process.ids.decode(history.last);
      this.fail(
        'order',
        `${process.name} issued ${id} (worker ${worker}, t=${parts.timestamp} seq ${parts.sequence}) below ` +
          `${history.last} (t=${before.timestamp} seq ${before.sequence}) issued by ${history.by} at ${history.at} ms`,
      );
      return;
    }
    history.ids.push(id);
    history.last = id;
    history.by = process.name;
    history.at = this.t;
  }

  private fail(kind: Violation['kind'], detail: string): void {
    if (this.violation !== undefined) return;
    this.violation = { kind, atMs: this.t, detail };
    this.log(`VIOLATION ${kind}: ${detail}`);
  }

  private checkLiveness(): void {
    const exempt = new Set(this.options.livenessExempt ?? []);
    for (const holder of this.holders) {
      if (exempt.has(holder.slot) || holder.issuedAfterHeal !== undefined) continue;
      const process = holder.process;
      this.fail(
        'liveness',
        `${process?.name ?? `h${holder.slot}`} issued nothing within ${livenessBoundMs(this.schedule)} ms after the faults ` +
          `stopped (state ${process?.state}, last refusal ${process?.lastRefusal ?? 'none'}, lease ` +
          `${JSON.stringify(process?.ids.status().lease?.state)})`,
      );
      return;
    }
  }

  /** Ends a process so that nothing of it runs on: its round trips never answer, and it leaves the registry. */
  private teardown(holder: Holder): void {
    const process = holder.process;
    if (process === undefined || process.dead) return;
    process.dead = true;
    process.state = 'dead';
    void process.ids.onApplicationShutdown().catch(() => undefined);
  }

  private isPaused(holder: Holder): boolean {
    return holder.pausedUntil > this.t;
  }

  /** Runs `callback` now, or when the holder's process runs again. */
  private whenRunning(holder: Holder, callback: () => void): void {
    if (this.isPaused(holder)) holder.onResume.push(callback);
    else callback();
  }

  // ---- the network -----------------------------------------------------------------------------------------------

  private delay(link: LinkState): number {
    const base = 1 + Math.floor(this.random() * 4);
    if (link.lossyUntil <= this.t) return base;
    return base + Math.floor(this.random() * link.delayMs);
  }

  private roundTrip(
    holder: Holder,
    process: SimProcess,
    script: ScriptName,
    keys: string[],
    args: (string | number)[],
  ): Promise<Reply> {
    if (process.dead) return new Promise(() => undefined);
    const timeoutMs = 2000;
    return new Promise<Reply>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void) =>
        this.whenRunning(holder, () => {
          if (settled || process.dead) return;
          settled = true;
          clearTimeout(timer);
          outcome();
        });
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(
              new LeaseConnectionError(
                'sim',
                `${script} failed`,
                new Error(`Redis ${script} did not answer within ${timeoutMs} ms`),
              ),
            ),
          ),
        timeoutMs,
      );
      const send = () => {
        const link = holder.link;
        if (this.redisDownUntil > this.t) {
          finish(() => reject(new LeaseConnectionError('sim', 'not connected (connection reconnecting)', undefined)));
          return;
        }
        const lossy = link.lossyUntil > this.t;
        if (link.requestsCutUntil > this.t || (lossy && this.random() * 100 < link.dropPct)) {
          this.log(`${process.name} ${script} request lost`);
          return;
        }
        const copies = lossy && this.random() * 100 < link.dupPct ? 2 : 1;
        /**
         * The request reaches a node (`hop`: the slot's owner as the client's slot map says, the importing node asked
         * with ASKING, a random primary after TRYAGAIN), which runs the script or redirects it; ioredis follows a
         * redirection at once (TRYAGAIN after 100 ms), 16 at most.
         */
        const deliver = (hop: Hop, redirections: number) => {
          if (this.redisDownUntil > this.t) return;
          const server = this.serverFor(holder);
          const answer = server === this.model ? this.clusterAnswer(process, hop, keys) : 'run';
          let reply: Reply | Error;
          if (answer === 'MOVED' || answer === 'ASK' || answer === 'TRYAGAIN') {
            if (redirections < 16) {
              this.log(`${process.name} ${script} answered ${answer}`);
              if (answer === 'MOVED') process.slotMap = this.slotMoves;
              const next: Hop = answer === 'ASK' ? 'asking' : answer === 'MOVED' ? 'owner' : 'random';
              const wait = this.delay(link) + (answer === 'TRYAGAIN' ? TRY_AGAIN_DELAY_MS : 0) + this.delay(link);
              setTimeout(() => deliver(next, redirections + 1), wait);
              return;
            }
            reply = new Error(`Too many Cluster redirections. Last error: ${answer}`);
          } else {
            try {
              this.scriptsRun++;
              reply =
                answer === 'run-on-target'
                  ? server.evalOn(this.migration!.target, this.scripts[script], keys, args)
                  : server.eval(this.scripts[script], keys, args);
            } catch (error) {
              reply = error as Error;
            }
          }
          if (this.options.trace) {
            const where =
              server !== this.model
                ? ' (on the old primary)'
                : answer === 'run-on-target'
                  ? ' (on the importing node)'
                  : '';
            this.log(`${process.name} ${script} ran${where}: ${describeReply(reply)}`);
          }
          if (copies > 1 && (answer === 'run' || answer === 'run-on-target')) {
            // Sent again to where the first copy ran; a duplicate that meets a redirection is dropped.
            setTimeout(() => {
              try {
                const again = this.serverFor(holder);
                const route =
                  again === this.model
                    ? this.clusterAnswer(process, answer === 'run' ? 'owner' : 'asking', keys)
                    : 'run';
                if (route !== 'run' && route !== 'run-on-target') return;
                this.scriptsRun++;
                if (route === 'run-on-target') again.evalOn(this.migration!.target, this.scripts[script], keys, args);
                else again.eval(this.scripts[script], keys, args);
                this.log(`${process.name} ${script} ran again (duplicated)`);
              } catch {
                // A duplicate's failure reaches nobody.
              }
            }, this.delay(link));
          }
          if (link.repliesCutUntil > this.t || (lossy && this.random() * 100 < link.dropPct)) {
            this.log(`${process.name} ${script} reply lost`);
            return;
          }
          setTimeout(
            () =>
              finish(() =>
                reply instanceof Error
                  ? reject(new LeaseConnectionError('sim', `${script} failed`, reply))
                  : resolve(reply),
              ),
            this.delay(link),
          );
        };
        setTimeout(() => deliver('owner', 0), this.delay(link));
      };
      this.whenRunning(holder, send);
    });
  }

  /**
   * What the node a request reaches does with it in a Redis Cluster (the namespace's keys share one slot), as Redis's
   * `getNodeByQuery` decides: the owner runs it, or answers MOVED to a client whose slot map is older than the last
   * slot move; while the slot migrates, the old node runs it only if every key it declares is there (not moved, and
   * existing: a missing key counts as moved) and answers ASK otherwise; the importing node, asked with ASKING, runs
   * it if every key it declares has moved there and exists, and answers TRYAGAIN otherwise. A random primary (after
   * TRYAGAIN) is the owner one time in three, else it answers MOVED.
   */
  private clusterAnswer(process: SimProcess, hop: Hop, keys: readonly string[]): ClusterAnswer {
    const migration = this.migration;
    if (hop === 'random' && this.clusterRandom() * 3 >= 1) return 'MOVED';
    if (hop === 'owner' && process.slotMap < this.slotMoves) return 'MOVED';
    if (migration === undefined) return 'run';
    if (hop === 'asking') {
      return keys.every((key) => migration.moved.has(key) && this.model.has(key)) ? 'run-on-target' : 'TRYAGAIN';
    }
    return keys.every((key) => !migration.moved.has(key) && this.model.has(key)) ? 'run' : 'ASK';
  }

  // ---- Sentinels -------------------------------------------------------------------------------------------------

  /** The lease's own SentinelConfirm, its links to the simulated Sentinels over this holder's network. */
  private sentinelsFor(holder: Holder, process: SimProcess): { confirm: SentinelConfirm; reconnect: () => void } {
    const client = {
      options: { name: 'sim', sentinels: range(SENTINELS).map((i) => ({ host: `sentinel${i}`, port: 26379 })) },
    };
    const confirm = SentinelConfirm.forClient(client as unknown as RedisClientLike, 2000)!;
    // Test seam: the links SentinelConfirm would open with ioredis, here to the simulated Sentinels.
    (confirm as unknown as { links: unknown }).links = range(SENTINELS).map((i) => ({
      address: `sentinel${i}:26379`,
      call: () => this.askSentinel(holder, process, i),
      disconnect: () => undefined,
    }));
    return {
      confirm,
      // ioredis with Sentinels asks them for the master on a reconnect: the connection leaves a stale primary.
      reconnect: () => {
        if (holder.staleUntil > this.t) this.log(`${process.name} reconnects to the master the Sentinels name`);
        holder.staleUntil = 0;
        holder.staleServer = undefined;
      },
    };
  }

  /** SENTINEL MASTER sim, as Sentinel i sees it when the request arrives; nothing while the link is cut. */
  private askSentinel(holder: Holder, process: SimProcess, i: number): Promise<unknown> {
    return new Promise((resolve) => {
      if (process.dead || holder.link.requestsCutUntil > this.t) return;
      setTimeout(() => {
        const view = this.sentinelViews[i];
        const reply = [
          'name',
          'sim',
          'ip',
          view.address,
          'port',
          '6379',
          'runid',
          view.runId,
          'flags',
          view.down ? 'master,s_down,o_down' : 'master',
          'config-epoch',
          String(view.epoch),
          'quorum',
          '2',
          'num-other-sentinels',
          String(SENTINELS - 1),
        ];
        if (holder.link.repliesCutUntil > this.t) return;
        setTimeout(() => this.whenRunning(holder, () => process.dead || resolve(reply)), this.delay(holder.link));
      }, this.delay(holder.link));
    });
  }

  /**
   * Sentinel i names `node` (at `address`, configuration epoch `epoch`) as the master `afterMs` from now, unless it
   * learnt of a later failover meanwhile; it reads the node's run_id then (INFO), whatever happened to it since.
   */
  private sentinelLearns(i: number, node: RedisModel, address: string, epoch: number, afterMs: number): void {
    setTimeout(() => {
      if (epoch > this.sentinelViews[i].epoch) this.sentinelViews[i] = { runId: node.runId, address, epoch };
    }, afterMs);
  }

  /**
   * A new run_id at the master's address (a restart, a slot moved): each Sentinel reads it from INFO within 10 s, the
   * run_id of whatever process serves there then.
   */
  private sentinelsSeeNewRunId(): void {
    const address = this.masterAddress;
    for (let i = 0; i < SENTINELS; i++) {
      setTimeout(
        () => {
          const view = this.sentinelViews[i];
          if (view.address === address && this.masterAddress === address) {
            this.sentinelViews[i] = { ...view, runId: this.model.runId };
          }
        },
        Math.floor(this.random() * 10_000),
      );
    }
  }

  // ---- faults ----------------------------------------------------------------------------------------------------

  private apply(fault: Fault, ends: { at: number; run: () => void }[]): void {
    this.faultsByKind[fault.kind] = (this.faultsByKind[fault.kind] ?? 0) + 1;
    const { at: _at, ...shown } = fault;
    this.log(`FAULT ${JSON.stringify(shown)}`);
    const holder = 'holder' in fault ? this.holders[fault.holder % this.holders.length] : undefined;
    const later = (ms: number, run: () => void) => ends.push({ at: this.t + ms, run });
    switch (fault.kind) {
      case 'deploy':
        this.holders.forEach((h, i) =>
          later(fault.offsets[i % fault.offsets.length], () => {
            const down = fault.downs[i % fault.downs.length];
            this.apply({ at: this.t, kind: 'shutdown', holder: h.slot, downMs: down }, ends);
          }),
        );
        return;
      case 'kill':
        this.stop(holder!, 'kill', fault.downMs);
        return;
      case 'shutdown':
        this.stop(holder!, 'shutdown', fault.downMs);
        return;
      case 'reconfigure':
        holder!.canaryTtlMs = fault.ttlMs;
        this.stop(holder!, 'shutdown', 0);
        return;
      case 'pause':
      case 'suspend': {
        const h = holder!;
        const until = Math.max(h.pausedUntil, this.t + fault.ms);
        h.pausedUntil = until;
        if (fault.kind === 'suspend') h.clock.freeze(true);
        later(fault.ms, () => {
          if (fault.kind === 'suspend') h.clock.freeze(false);
          if (h.pausedUntil <= this.t) this.resume(h);
        });
        return;
      }
      case 'partition': {
        const link = holder!.link;
        if (fault.way !== 'replies') link.requestsCutUntil = Math.max(link.requestsCutUntil, this.t + fault.ms);
        if (fault.way !== 'requests') link.repliesCutUntil = Math.max(link.repliesCutUntil, this.t + fault.ms);
        return;
      }
      case 'lossy': {
        Object.assign(holder!.link, {
          lossyUntil: this.t + fault.ms,
          delayMs: fault.delayMs,
          dropPct: fault.dropPct,
          dupPct: fault.dupPct,
        });
        return;
      }
      case 'wall-step':
        holder!.clock.step(fault.byMs);
        return;
      case 'rate':
        holder!.clock.setRate(fault.clock, fault.ppm);
        return;
      case 'redis-restart': {
        this.redisDownUntil = this.t + fault.downMs;
        this.model.restart(fault.from === 'empty' ? undefined : this.snapshotAgo(fault.from.agoMs));
        this.sentinelsSeeNewRunId();
        return;
      }
      case 'flushall':
        this.model.flushAll();
        return;
      case 'redis-clock':
        this.model.clockOffsetMs = fault.toMs;
        return;
      case 'delete':
        this.model.deleteKeys(fault.keys.map((i) => this.keyNames[i % this.keyNames.length]));
        return;
      case 'rollback':
        this.model.rollback(this.snapshotAgo(fault.agoMs));
        return;
      case 'evict': {
        const evicted = this.model.evictLeastRecentlyUsed(fault.count);
        this.log(`evicted ${evicted.join(', ') || 'nothing'}`);
        return;
      }
      case 'failover': {
        const old = this.model;
        const oldAddress = this.masterAddress;
        const promoted = new RedisModel(
          () => this.time.now(),
          this.schedule.seed * 31 + ++this.nodes,
          scriptEngine(this.options.lua),
        );
        promoted.restart(this.snapshotAgo(fault.lagMs));
        promoted.clockOffsetMs = this.hostSkewMs(++this.hostChanges);
        this.model = promoted;
        this.masterAddress = `node${this.nodes}`;
        const epoch = ++this.epoch;
        // A failover needs a majority of the Sentinels to see the master down and to authorise it: the majority that
        // learns of the new master first sees the old one down until then; the last Sentinel (cut off from the
        // others, say) may still see it up. A Sentinel that authorises it knows the master it replaces, also one that
        // had not yet heard of that master's own promotion (two failovers in quick succession): seeing a master down
        // takes knowing it. Hearing of that earlier promotion afterwards changes nothing (its epoch is not newer).
        const delays = range(SENTINELS).map((i) => fault.sentinelDelays?.[i] ?? 0);
        const quorum = [...range(SENTINELS)].sort((a, b) => delays[a] - delays[b] || a - b).slice(0, MAJORITY);
        for (const i of quorum) {
          this.sentinelViews[i] = { runId: old.runId, address: oldAddress, epoch: epoch - 1, down: true };
        }
        for (let i = 0; i < SENTINELS; i++) {
          this.sentinelLearns(i, promoted, this.masterAddress, epoch, delays[i]);
        }
        for (const slot of fault.stale) {
          const h = this.holders[slot % this.holders.length];
          h.staleServer = old;
          h.staleUntil = Math.max(h.staleUntil, this.t + fault.staleMs);
        }
        return;
      }
      case 'migrate': {
        this.migration?.finish();
        // The keys in the order a scan of the slot finds them, moved `batch` at a time, the batches spread over `ms`.
        const order = [...this.keyNames];
        for (let i = order.length - 1; i > 0; i--) {
          const j = Math.floor(this.clusterRandom() * (i + 1));
          [order[i], order[j]] = [order[j], order[i]];
        }
        const batch = Math.max(1, fault.batch);
        const batches = Math.ceil(order.length / batch);
        const migration: Migration = {
          target: this.model.anotherNode(this.hostSkewMs(++this.hostChanges)),
          moved: new Set(),
          finish: () => {
            if (this.migration !== migration) return;
            this.migration = undefined;
            this.slotMoves++;
            this.model.moveToAnotherNode(migration.target);
            this.sentinelsSeeNewRunId();
            this.log('slot migrated: the namespace is served by another node');
          },
        };
        this.migration = migration;
        for (let b = 0; b < batches; b++) {
          const keys = order.slice(b * batch, (b + 1) * batch);
          later(Math.floor((fault.ms * b) / batches), () => {
            if (this.migration !== migration) return;
            for (const key of keys) migration.moved.add(key);
            this.log(`keys moved to the importing node: ${keys.join(', ')}`);
          });
        }
        later(fault.ms, migration.finish);
        return;
      }
    }
  }

  /** The Redis process a holder's requests reach: the primary, or the old one while its view is stale. */
  private serverFor(holder: Holder): RedisModel {
    return holder.staleServer !== undefined && holder.staleUntil > this.t ? holder.staleServer : this.model;
  }

  private snapshotAgo(agoMs: number): Snapshot {
    const wanted = this.t - agoMs;
    let best = this.snapshots[0];
    for (const entry of this.snapshots) if (entry.at <= wanted) best = entry;
    return best?.snapshot ?? this.model.snapshot();
  }

  private resume(holder: Holder): void {
    holder.pausedUntil = 0;
    const waiting = holder.onResume.splice(0);
    for (const callback of waiting) callback();
  }

  /** The faults stop: links heal, paused processes resume, clocks return to their skew, stopped processes start. */
  /** kill -9 or a graceful shutdown of the holder's process; a new one starts `downMs` later. */
  private stop(holder: Holder, how: 'kill' | 'shutdown', downMs: number): void {
    const process = holder.process;
    if (process === undefined || process.dead) return;
    if (how === 'kill') {
      process.dead = true;
      process.state = 'dead';
    } else {
      process.state = 'stopped';
      this.whenRunning(holder, () => void process.ids.onApplicationShutdown().catch(() => undefined));
    }
    holder.restartAt = this.t + downMs;
  }

  private heal(): void {
    this.healed = true;
    this.redisDownUntil = 0;
    this.log('faults stop; liveness clock starts');
    this.migration?.finish();
    // The Sentinels agree on the master again.
    for (let i = 0; i < SENTINELS; i++) {
      this.sentinelViews[i] = { runId: this.model.runId, address: this.masterAddress, epoch: this.epoch };
    }
    for (const holder of this.holders) {
      Object.assign(holder.link, { requestsCutUntil: 0, repliesCutUntil: 0, lossyUntil: 0 });
      holder.staleServer = undefined;
      holder.staleUntil = 0;
      holder.clock.heal();
      if (holder.pausedUntil > 0) this.resume(holder);
      if (holder.canaryTtlMs !== undefined) {
        // The canary is rolled back: its process shuts down, and one with the fleet's contract starts.
        holder.canaryTtlMs = undefined;
        this.stop(holder, 'shutdown', 0);
      }
      const state = holder.process?.state;
      if (holder.process === undefined || state === 'dead' || state === 'stopped' || state === 'failed') {
        holder.restartAt = Math.min(holder.restartAt ?? Infinity, this.t);
      }
    }
  }
}

/**
 * The planted fence bugs: a wrapper around the lease that issues past its fence, where the real permit refuses with
 * 'fenced': `fence` answers with the lease's confirmed ceiling, `fence-and-ceiling` with no ceiling at all (the
 * layout's last tick). Test-only; it reads the lease's private phase.
 */
class FenceIgnored implements WorkerIdSource {
  readonly kind = 'redis';

  constructor(
    private readonly inner: RedisWorkerSource,
    private readonly keepCeiling: boolean,
    private readonly onPastFence: () => void,
  ) {}

  async start(context: WorkerSourceContext): Promise<WorkerAssignment> {
    const proxy: WorkerSourceContext = {
      layout: context.layout,
      clock: context.clock,
      logger: context.logger,
      lastTimestamp: () => context.lastTimestamp(),
      reassign: (assignment, reason) => context.reassign(assignment && this.wrap(assignment), reason),
    };
    return this.wrap(await this.inner.start(proxy));
  }

  stop(lastTimestamp: number): Promise<void> {
    return this.inner.stop(lastTimestamp);
  }

  requestSwitch(lastTimestamp: number, reason: string): boolean {
    return this.inner.requestSwitch(lastTimestamp, reason);
  }

  whenReady(): Promise<void> {
    return this.inner.whenReady();
  }

  private wrap(assignment: WorkerAssignment): WorkerAssignment {
    const permit = assignment.permit;
    if (permit === undefined) return assignment;
    const inner = this.inner as unknown as { phase: { name: string; lease?: { ceilingTicks: number } } };
    return {
      ...assignment,
      permit: {
        ceiling: (nowMs) => {
          try {
            return permit.ceiling(nowMs);
          } catch (error) {
            const lease = inner.phase.lease;
            if (error instanceof WorkerUnavailableError && error.reason === 'fenced' && lease !== undefined) {
              this.onPastFence();
              return this.keepCeiling ? lease.ceilingTicks : LAYOUT.maxTimestamp;
            }
            throw error;
          }
        },
        ceilingReached: () => permit.ceilingReached?.(),
      },
    };
  }
}

function describeReply(reply: Reply | Error): string {
  if (reply instanceof Error) return `error ${reply.message}`;
  if (!Array.isArray(reply)) return JSON.stringify(reply);
  return JSON.stringify(reply.slice(0, -1));
}

/** ioredis's `retryDelayOnTryAgain` (its default). */
const TRY_AGAIN_DELAY_MS = 100;

/** Where a request goes in a Redis Cluster: see {@link World.clusterAnswer}. */
type Hop = 'owner' | 'asking' | 'random';
type ClusterAnswer = 'run' | 'run-on-target' | 'MOVED' | 'ASK' | 'TRYAGAIN';

/** A slot migration under way: the importing node's identity and the keys moved to it so far. */
interface Migration {
  target: NodeIdentity;
  moved: Set<string>;
  finish: () => void;
}

const SENTINELS = 3;
const MAJORITY = Math.floor(SENTINELS / 2) + 1;

interface SentinelView {
  runId: string;
  address: string;
  epoch: number;
  /** The master is seen down (`s_down,o_down`): this Sentinel agreed to the failover under way. */
  down?: boolean;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

const WORKER_SHIFT = BigInt(LAYOUT.workerShift);
const DATACENTER_SHIFT = BigInt(LAYOUT.datacenterShift);
const WORKER_MASK = BigInt(LAYOUT.maxWorkerId);
const DATACENTER_MASK = BigInt(LAYOUT.maxDatacenterId);

if (LAYOUT.datacenterShift !== LAYOUT.workerShift + LAYOUT.workerBits)
  throw new Error('datacenter bits not above worker bits');
const WORKER_AND_DATACENTER_MASK = (1n << BigInt(LAYOUT.datacenterBits + LAYOUT.workerBits)) - 1n;

/** The datacenter and worker ID of an ID as one small number (this runs for every ID). */
function workerSlot(id: bigint): number {
  return Number((id >> WORKER_SHIFT) & WORKER_AND_DATACENTER_MASK);
}

interface WorkerHistory {
  ids: bigint[];
  last: bigint;
  by: string;
  at: number;
}

/** `datacenter:worker` of an ID, as `decode` gives them, without decoding the rest. */
function workerOf(id: bigint): string {
  return `${(id >> DATACENTER_SHIFT) & DATACENTER_MASK}:${(id >> WORKER_SHIFT) & WORKER_MASK}`;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
