import type { Clocks } from '../core/clock.js';
import type { IssuePermit } from '../core/permit.js';
import { msAtTicks, ticksAtMs } from '../core/time-units.js';
import type { WorkerAssignment, WorkerSourceContext } from '../worker/worker-source.js';
import { countLease } from '../worker/process-workers.js';
import type { Sleeper } from './async-tools.js';
import { CapacityGauge } from './capacity-gauge.js';
import type { ClaimHost } from './claim-loop.js';
import { GiveBack } from './give-back.js';
import type { LeaseBackend } from './lease.backend.js';
import type { LeaseKeys } from './lease.keys.js';
import { permittedCeiling } from './lease.permit.js';
import type { HeldLease, LeasePhase } from './lease.phase.js';
import { LeaseRounds } from './lease.rounds.js';
import { LeaseRecovery } from './lease.recovery.js';
import type { LeaseSettings } from './lease.settings.js';
import type { RenewalHistory } from './renewal-history.js';
import type { ServerClock } from './server-clock.js';

/**
 * What a lease runs with once started: the app's context and clocks, the open backend, and the parts built on them.
 * Built together in `start()` from what only the app can give (its clock, logger and layout) and the open backend,
 * then never replaced: nothing in here changes after the lease has started.
 */
export interface LeaseParts {
  readonly context: WorkerSourceContext;
  readonly clocks: Clocks;
  readonly backend: LeaseBackend;
  readonly rounds: LeaseRounds;
  readonly giveBack: GiveBack;
  readonly capacity: CapacityGauge;
  /** What every claim of this lease runs with (the bootstrap's, and those after a loss or a switch). */
  readonly claimHost: ClaimHost;
  /** The way back to a held lease after a loss or a switch. */
  readonly recovery: LeaseRecovery;
  /** What the generator is given with a held lease: its IDs, its floor in ticks and the permit that guards it. */
  readonly assignment: (lease: HeldLease) => WorkerAssignment;
  /** Stops counting this lease among the process's leases in the namespace. */
  readonly uncount: () => void;
}

/** What the lease gives its parts: its settings and keys, and the hooks into its own state. */
export interface LeasePartsInput {
  settings: LeaseSettings;
  keys: LeaseKeys;
  fixedDatacenterId: number;
  serverClock: ServerClock;
  sleeper: Sleeper;
  random: () => number;
  /** Its renewals' record; every failure lands in its `lastError`. */
  history: RenewalHistory;
  phase: () => LeasePhase;
  isStopped: () => boolean;
  /** Asks for a renewal now (the wall clock drifted from the server's, or the permitted ceiling is near). */
  renewEarly: () => void;
  /** Told when the namespace settles (monotonic end) and when a claim got past it (null). */
  settling: (untilMono: number | null) => void;
  /** Whether `lease` is the one the lease holds now. */
  holds: (lease: HeldLease) => boolean;
  /** Takes a lease claimed after a loss or a switch (in the turn its claim ended, never after a stop). */
  adopt: (lease: HeldLease, why: string) => void;
}

export function buildLeaseParts(
  input: LeasePartsInput,
  context: WorkerSourceContext,
  clocks: Clocks,
  backend: LeaseBackend,
): LeaseParts {
  const { settings, keys } = input;
  const capacity = new CapacityGauge(settings, context.logger);
  const rounds = new LeaseRounds(
    backend,
    input.serverClock,
    clocks,
    settings,
    context.layout,
    input.fixedDatacenterId,
    capacity,
    input.random,
  );
  const failed = (error: string): void => {
    input.history.lastError = error;
  };
  const giveBack = new GiveBack(rounds, settings, context.logger, input.sleeper, input.isStopped, failed);
  const uncount = countLease(keys.meta, settings.namespace, context.logger);
  const claimHost: ClaimHost = {
    rounds,
    settings,
    layout: context.layout,
    clocks,
    logger: context.logger,
    sleeper: input.sleeper,
    serverClock: input.serverClock,
    isStopped: input.isStopped,
    settling: input.settling,
    failed,
    lastMsOf: (lease) => (input.holds(lease) ? msAtTicks(context.layout, context.lastTimestamp()) : -1),
  };
  const recovery = new LeaseRecovery({
    settings,
    sleeper: input.sleeper,
    claimHost,
    rounds,
    giveBack,
    logger: context.logger,
    isStopped: input.isStopped,
    failed,
    adopt: input.adopt,
  });
  const permit: IssuePermit = {
    ceiling: (nowMs) =>
      permittedCeiling(
        input.phase(),
        nowMs,
        clocks.monotonicNow(),
        input.serverClock,
        settings.namespace,
        input.history.lastError,
        input.renewEarly,
      ),
    ceilingReached: input.renewEarly,
  };
  const assignment = (lease: HeldLease): WorkerAssignment => {
    const floor = lease.floorMs === null ? -1 : ticksAtMs(context.layout, lease.floorMs);
    return { workerId: lease.workerId, datacenterId: lease.datacenterId, floor, permit };
  };
  return { context, clocks, backend, rounds, giveBack, capacity, claimHost, recovery, assignment, uncount };
}
