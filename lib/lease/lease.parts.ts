import type { Clocks } from '../core/clock.js';
import type { WorkerSourceContext } from '../worker/worker-source.js';
import { countLease } from '../worker/process-workers.js';
import type { Sleeper } from './async-tools.js';
import { CapacityGauge } from './capacity-gauge.js';
import { GiveBack } from './give-back.js';
import type { LeaseBackend } from './lease.backend.js';
import type { LeaseKeys } from './lease.keys.js';
import { LeaseRounds } from './lease.rounds.js';
import type { LeaseSettings } from './lease.settings.js';
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
  isStopped: () => boolean;
  failed: (error: string) => void;
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
  const giveBack = new GiveBack(rounds, settings, context.logger, input.sleeper, input.isStopped, input.failed);
  const uncount = countLease(keys.meta, settings.namespace, context.logger);
  return { context, clocks, backend, rounds, giveBack, capacity, uncount };
}
