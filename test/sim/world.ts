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
import { WorkerUnavailableError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { LeaseConnectionError } from '../../lib/lease/redis/lease.client.js';
import { leaseKeys } from '../../lib/lease/lease.keys.js';
import type { RedisClientLike } from '../../lib/lease/lease.options.js';
import type { SearchFigures } from './report-figures.mjs';
import { RedisWorkerSource } from '../../lib/lease/redis-worker.source.js';
import { ClusterConfirm } from '../../lib/lease/redis/cluster.confirm.js';
import { nodeReply } from './cluster-nodes.js';
import { SentinelConfirm } from '../../lib/lease/redis/sentinel.confirm.js';
import type { Layout } from '../../lib/core/layout.js';
import { IdService } from '../../lib/module/id.service.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import type { WorkerIdSource } from '../../lib/worker/worker-source.js';
import { mulberry32 } from '../support/seeded-random.js';
import { scriptEngine, type EngineName } from './lua/engines.js';
import { RedisModel, type NodeIdentity, type Reply, type Snapshot } from './redis-model.js';
import { SimBackend, type ReplyTamper, type ScriptName, type SimLink } from './sim-backend.js';
import { SimTime, TimerStorm } from './sim-time.js';
import { SimClock } from './sim-clock.js';
import { FenceIgnored, scriptsFor, type PlantedBug } from './world-bugs.js';
import {
  CANARY_LAYOUTS,
  ID_COUNT,
  LAYOUT,
  START,
  TTL_MS,
  livenessBoundMs,
  redeployedSkewMs,
  simSettings,
  type CanaryClocks,
  type Fault,
  type HolderSpec,
  type Schedule,
} from './world-schedule.js';

export {
  ID_COUNT,
  LIVENESS_BOUND_MS,
  TTL_MS,
  livenessBoundMs,
  redisClockBandMs,
  simSettings,
  type Fault,
  type HolderSpec,
  type Schedule,
} from './world-schedule.js';
export type { PlantedBug, PreFixBehaviour } from './world-bugs.js';

/** How often the processes are asked for IDs and faults are applied (SIM_STEP_MS to change it). */
const STEP_MS = Number(process.env.SIM_STEP_MS ?? 20);
const SNAPSHOT_EVERY_MS = 200;
const RESTART_AFTER_FAILED_BOOT_MS = 1000;

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
  /** The canary's layout (the fleet's unless the fault names another). */
  canaryLayout: Layout | undefined;
  /** The canary's clock numbers (derived from its TTL unless the fault names narrow ones). */
  canaryClocks: CanaryClocks | undefined;
  /** A `redeploy` moved the holder to another machine: its next process runs on a clock this far off the true time. */
  movedSkewMs: number | undefined;
}

interface SimProcess {
  name: string;
  ids: IdService;
  state: 'starting' | 'running' | 'failed' | 'dead' | 'stopped';
  dead: boolean;
  /** The slot moves its cluster client knows of (ioredis's slot map): fewer than the world's, and the old node answers MOVED. */
  slotMap: number;
  /** The layout its IDs follow: the fleet's {@link LAYOUT}, or a canary's. */
  layout: Layout;
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
  /** IDs issued by canaries with another layout, and by whom. */
  private readonly otherLayoutIds = new Map<bigint, string>();
  private readonly faultsByKind: Record<string, number> = {};
  private readonly keyNames: string[];
  private redisDownUntil = 0;
  /** Until when Redis stays above its `maxmemory` (an `evict` fault's `pressureMs`): one key evicted every step. */
  private pressureUntil = 0;
  /**
   * A `redis-pause` under way: the paused primary, until when, the requests waiting in its sockets, and the processes
   * connected to it when it paused (they keep sending to it; processes started since reach the promoted node).
   */
  private frozen:
    | { server: RedisModel; until: number; queue: (() => void)[]; connected: Set<SimProcess>; demoteMs: number }
    | undefined;
  /** The primary the last failover replaced, and when each other primary of the cluster learns it was (true ms). */
  private clusterFormer: RedisModel | undefined;
  private clusterLearnsAt: number[] = [];
  /** Each promoted node's configuration epoch (the first primary's is 1). */
  private readonly clusterEpochs = new WeakMap<RedisModel, number>();
  /** A `pressure` fault under way: until when, and how long a key may stay idle. */
  private idlePressure = { until: 0, idleMs: 0 };
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
      canaryLayout: undefined,
      canaryClocks: undefined,
      movedSkewMs: undefined,
    }));
    const keys = leaseKeys(simSettings(), 0);
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
      if (t < this.pressureUntil && !this.healed) this.evictUnderPressure();
      if (t < this.idlePressure.until && !this.healed) this.evictIdle();
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
      otherLayoutIds: this.otherLayoutIds.size,
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

  private start(holder: Holder): void {
    holder.restartAt = undefined;
    if (holder.movedSkewMs !== undefined) {
      // Another machine, another clock: the old one's steps and rate go with the old machine.
      holder.clock = new SimClock(() => this.time.now(), holder.movedSkewMs);
      holder.movedSkewMs = undefined;
    }
    const name = `h${holder.slot}#${++holder.incarnation}`;
    const layout = holder.canaryLayout ?? LAYOUT;
    const settings = simSettings(holder.canaryTtlMs ?? holder.spec.ttlMs ?? TTL_MS, layout, holder.canaryClocks);
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
      layout,
      lastWorker: undefined,
      lastRefusal: undefined,
    };
    const link: SimLink = { run: (script, keys, args) => this.roundTrip(holder, process, script, keys, args) };
    const sentinel = this.schedule.sentinels ? this.sentinelsFor(holder, process) : undefined;
    const cluster =
      this.schedule.sentinels || this.schedule.plainReplicas || this.options.bug === 'cluster-unconfirmed'
        ? undefined
        : this.clusterFor(holder, process);
    // The lease's pick of which free ID a contended claim tries, from a stream of its own seeded by the schedule:
    // a replay makes the same picks, and the world's own draws (faults, delays) stay as they were.
    const picks = mulberry32((this.schedule.seed * 7919 + holder.slot * 131 + holder.incarnation) >>> 0);
    let source: WorkerIdSource = new RedisWorkerSource(
      settings,
      0,
      (s, keys) => Promise.resolve(new SimBackend(link, s, keys, name, holder.incarnation, tamper, sentinel, cluster)),
      picks,
    );
    if (this.options.bug === 'fence' || this.options.bug === 'fence-and-ceiling') {
      source = new FenceIgnored(source as RedisWorkerSource, this.options.bug === 'fence', () => this.pastFence++);
    }
    const generator = new SnowflakeGenerator({
      layout,
      clock: holder.clock,
      clockBackToleranceMs: settings.clockBackToleranceMs,
      maxSyncWaitMs: 0,
    });
    process.ids = new IdService(new WorkerBinding(generator, source, layout, holder.clock, quiet));
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
        const { datacenterId, workerId, timestamp } = process.ids.decode(id);
        this.log(`${process.name} issues as worker ${datacenterId}:${workerId} from ${timestamp} (${id})`);
      }
      process.lastWorker = slot;
    }
    if (process.layout !== LAYOUT) {
      this.checkOtherLayout(holder, process, id);
      return;
    }
    if (this.otherLayoutIds.size > 0 && this.otherLayoutIds.has(id)) {
      this.fail('duplicate', `${process.name} issued ${id}, which ${this.otherLayoutIds.get(id)} issued before`);
      return;
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

  /**
   * An ID of a canary with another layout: unique as a 64-bit number among every ID issued, whatever its layout (the
   * fleet's histories are searched under the worker the fleet's layout reads in it). Order is not checked across
   * layouts, where it means nothing.
   */
  private checkOtherLayout(holder: Holder, process: SimProcess, id: bigint): void {
    if (this.healed && holder.issuedAfterHeal === undefined) holder.issuedAfterHeal = this.t;
    const earlier =
      this.otherLayoutIds.get(id) ?? (this.byWorker[workerSlot(id)]?.ids.includes(id) ? 'the fleet' : undefined);
    if (earlier !== undefined) {
      this.fail('duplicate', `${process.name} (another layout) issued ${id}, which ${earlier} issued before`);
      return;
    }
    this.otherLayoutIds.set(id, process.name);
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
          const server = this.serverFor(holder, process);
          const frozen = this.frozen;
          if (frozen !== undefined && server === frozen.server && this.t < frozen.until) {
            // The server is paused: the request waits in its socket until it runs again.
            frozen.queue.push(() => deliver(hop, redirections));
            return;
          }
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
                const again = this.serverFor(holder, process);
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

  // ---- Cluster nodes ---------------------------------------------------------------------------------------------

  /**
   * The lease's own ClusterConfirm, over the nodes this holder's client knows: the node its requests reach (the
   * slot's primary, or an old primary it is still connected to), the primary that serves the slot now, and the other
   * two primaries of the cluster (the three serve a third of the slots each).
   */
  private clusterFor(holder: Holder, process: SimProcess): ClusterConfirm {
    const ask = (node: RedisModel | number) => ({
      call: (command: string, ...args: string[]) => this.askNode(holder, process, node, [command, ...args]),
    });
    const client = {
      isCluster: true as const,
      nodes: () => {
        const reached = this.serverFor(holder, process);
        return [...(reached === this.model ? [reached] : [reached, this.model]), 1, 2].map(ask);
      },
    };
    return ClusterConfirm.forClient(client, 2000)!;
  }

  /**
   * A cluster node's answer to INFO, CLUSTER NODES and CLUSTER KEYSLOT over this holder's network: the slot's
   * primary (a server) or another primary (1, 2). Every node names the server that serves the slot now, but an old
   * primary, which names itself until it learns of its demotion (while it is paused, or just after); a paused one
   * answers when it runs again.
   */
  private askNode(holder: Holder, process: SimProcess, node: RedisModel | number, command: string[]): Promise<unknown> {
    return new Promise((resolve) => {
      if (process.dead || holder.link.requestsCutUntil > this.t) return;
      const answer = () => {
        if (holder.link.repliesCutUntil > this.t) return;
        const learning = typeof node === 'number' && this.t < (this.clusterLearnsAt[node - 1] ?? 0);
        const former = learning ? this.clusterFormer : undefined;
        const reply = nodeReply(node, this.model, command, former, (m) => this.clusterEpochs.get(m) ?? 1);
        setTimeout(() => this.whenRunning(holder, () => process.dead || resolve(reply)), this.delay(holder.link));
      };
      setTimeout(() => {
        const frozen = this.frozen;
        if (frozen !== undefined && node === frozen.server && this.t < frozen.until) frozen.queue.push(answer);
        else answer();
      }, this.delay(holder.link));
    });
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
        holder!.canaryLayout = CANARY_LAYOUTS[fault.layout ?? 'fleet'];
        holder!.canaryClocks = fault.clocks;
        this.stop(holder!, 'shutdown', 0);
        return;
      case 'redis-pause': {
        this.thaw();
        const connected = new Set<SimProcess>();
        for (const h of this.holders) if (h.process !== undefined && !h.process.dead) connected.add(h.process);
        const demoteMs = fault.demoteAfterMs ?? 0;
        this.frozen = { server: this.model, until: this.t + fault.ms, queue: [], connected, demoteMs };
        if (fault.promoteAfterMs < fault.ms) {
          // The cluster sees the primary down and promotes its replica, which has every write (a paused primary
          // takes none).
          later(fault.promoteAfterMs, () => {
            if (this.frozen?.server === this.model) {
              this.apply({ at: this.t, kind: 'failover', lagMs: 0, stale: [], staleMs: 0 }, ends);
            }
          });
        }
        later(fault.ms, () => this.thaw());
        return;
      }
      case 'pressure':
        this.idlePressure = {
          until: Math.max(this.idlePressure.until, this.t + fault.ms),
          idleMs: fault.idleMs,
        };
        return;
      case 'redeploy': {
        // Recreate, as a Deployment of that strategy does it: the new processes start once every old one has stopped.
        const offsetOf = (i: number) => fault.offsets[i % fault.offsets.length];
        const lastStop = Math.max(...this.holders.map((_, i) => offsetOf(i)));
        this.holders.forEach((h, i) =>
          later(offsetOf(i), () => {
            // A part that falls after the faults stopped is not deployed: the fleet is back on its own contract.
            if (this.healed) return;
            h.canaryTtlMs = fault.ttlMs;
            h.canaryLayout = LAYOUT;
            h.canaryClocks = fault.clocks;
            const settings = simSettings(fault.ttlMs, LAYOUT, fault.clocks);
            const fraction = fault.skews[i % fault.skews.length];
            h.movedSkewMs = redeployedSkewMs(this.schedule.holders, this.model.clockOffsetMs, settings, fraction);
            this.stop(h, 'shutdown', lastStop - offsetOf(i) + fault.downMs);
          }),
        );
        return;
      }
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
        this.pressureUntil = Math.max(this.pressureUntil, this.t + (fault.pressureMs ?? 0));
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
        // The cluster's other primaries flag the old primary failing (they voted), then hear from the promoted node.
        this.clusterFormer = old;
        this.clusterLearnsAt = CLUSTER_LEARN_MS.map((ms) => this.t + ms);
        this.masterAddress = `node${this.nodes}`;
        const epoch = ++this.epoch;
        this.clusterEpochs.set(promoted, epoch);
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
  private serverFor(holder: Holder, process: SimProcess): RedisModel {
    // A connection made before a primary paused stays with it (no socket error, no MOVED) until it runs again.
    const frozen = this.frozen;
    if (frozen !== undefined && frozen.connected.has(process)) return frozen.server;
    return holder.staleServer !== undefined && holder.staleUntil > this.t ? holder.staleServer : this.model;
  }

  /**
   * The paused primary runs again: first the requests that waited in its sockets, on its old data, as its event loop
   * reads them before any message of the cluster's that demotes it; replaced meanwhile, it serves its clients' next
   * requests there too for `demoteAfterMs`, until it learns of its demotion; then its clients are told MOVED and go to
   * the promoted node (or, without a promotion, on as before).
   */
  private thaw(): void {
    const frozen = this.frozen;
    if (frozen === undefined) return;
    frozen.until = this.t;
    this.log(`the paused Redis runs again: ${frozen.queue.length} waiting request(s) run on its data`);
    for (const run of frozen.queue.splice(0)) run();
    this.frozen = undefined;
    if (frozen.server === this.model || frozen.demoteMs === 0) return;
    // Replaced while it was paused, it serves its clients on its old data until a message of the cluster demotes it.
    for (const holder of this.holders) {
      if (holder.process === undefined || !frozen.connected.has(holder.process)) continue;
      holder.staleServer = frozen.server;
      holder.staleUntil = Math.max(holder.staleUntil, this.t + frozen.demoteMs);
    }
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

  /** One step of a server above its `maxmemory` among the app's keys: every key idle longer than they live goes. */
  private evictIdle(): void {
    const evicted = this.model.evictIdle(this.idlePressure.idleMs);
    if (evicted.length > 0) this.log(`evicted idle under pressure: ${evicted.join(', ')}`);
  }

  /** One step of a server above its `maxmemory`: the key used longest ago goes. */
  private evictUnderPressure(): void {
    const evicted = this.model.evictLeastRecentlyUsed(1);
    if (evicted.length > 0) this.log(`evicted under pressure: ${evicted.join(', ')}`);
  }

  private heal(): void {
    this.healed = true;
    this.redisDownUntil = 0;
    this.thaw();
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
        holder.canaryLayout = undefined;
        holder.canaryClocks = undefined;
        this.stop(holder, 'shutdown', 0);
      }
      const state = holder.process?.state;
      if (holder.process === undefined || state === 'dead' || state === 'stopped' || state === 'failed') {
        holder.restartAt = Math.min(holder.restartAt ?? Infinity, this.t);
      }
    }
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

/** How long after a promotion each of the cluster's other two primaries hears of it from the promoted node. */
const CLUSTER_LEARN_MS = [50, 400];
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
