import type { Attributes, BatchObservableCallback, Meter, Observable } from '@opentelemetry/api';
import type { LeaseCapacity, LeaseStatus } from '../lease/lease.status.js';
import type { LeaseRenewalSample, ObservesRenewals } from '../lease/renewal-observers.js';
import type { SnowflakeStatus } from '../module/id.service.js';

/** Every state a lease reports, so that the state gauge always has one series per state (1 for the current one). */
const LEASE_STATES: readonly LeaseStatus['state'][] = [
  'idle',
  'claiming',
  'settling',
  'held',
  'fenced',
  'lost',
  'switching',
  'released',
];

/**
 * Held and free worker IDs of the namespace, as the lease counted them at its last claim or renewal. An app's own
 * source may report a status without them (or null before its first count): then no capacity gauge is published,
 * rather than a made-up zero.
 */
function capacityOf(lease: LeaseStatus): LeaseCapacity | null {
  return (lease as Partial<LeaseStatus>).capacity ?? null;
}

/** Attribute names: OpenTelemetry's `error.type` for causes, the rest in the library's namespace. */
export const METRIC_ATTRIBUTES = {
  generator: 'snowflake.generator',
  leaseState: 'snowflake.lease.state',
  renewalOutcome: 'snowflake.lease.renewal.outcome',
  errorType: 'error.type',
} as const;

/** Bucket boundaries of the renewal histogram, in seconds: the ones OpenTelemetry advises for durations in `s`. */
const RENEWAL_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One registration to report: its name (the `snowflake.generator` attribute), its status, and its lease if any. */
export interface InstrumentedGenerator {
  name: string;
  status: () => SnowflakeStatus;
  lease: ObservesRenewals | undefined;
}

/**
 * Creates the instruments on `meter` once and starts reporting every generator on them, each point carrying the
 * generator's name: observable ones read `status()` once per collection (so `next()` pays nothing), renewal round
 * trips arrive from each lease's listener. Returns what undoes it all.
 */
export function registerInstruments(
  meter: Meter,
  prefix: string,
  generators: readonly InstrumentedGenerator[],
): () => void {
  const name = (suffix: string) => `${prefix}.${suffix}`;
  const issued = meter.createObservableCounter(name('ids.issued'), {
    description: 'IDs issued since the process started.',
    unit: '{id}',
  });
  const overflowWaits = meter.createObservableCounter(name('sequence.overflow_waits'), {
    description: 'Times the sequence of a time unit ran out and the generator waited for the next time unit.',
    unit: '{wait}',
  });
  const clockBackEvents = meter.createObservableCounter(name('clock.back_events'), {
    description: 'Times the wall clock was seen behind the last issued timestamp.',
    unit: '{event}',
  });
  const ready = meter.createObservableGauge(name('ready'), {
    description: 'Whether an ID may be issued right now (1) or not (0).',
    unit: '1',
  });
  const switches = meter.createObservableCounter(name('worker.switches'), {
    description: 'Worker-ID switches of the lease since start (clock steps back, lost leases).',
    unit: '{switch}',
  });
  const leaseState = meter.createObservableGauge(name('lease.state'), {
    description: `The lease's state: 1 on the series of the current \`${METRIC_ATTRIBUTES.leaseState}\`, 0 on the others.`,
    unit: '1',
  });
  const fenceHeadroom = meter.createObservableGauge(name('lease.fence.headroom'), {
    description:
      'Time until the holder fences itself (stops issuing) unless a renewal succeeds first; 0 without a lease.',
    unit: 's',
  });
  const clockOffset = meter.createObservableGauge(name('lease.clock.offset'), {
    description: "The local wall clock minus the Redis server's clock.",
    unit: 's',
  });
  const consecutiveFailures = meter.createObservableGauge(name('lease.renewal.consecutive_failures'), {
    description: 'Lease renewals that failed in a row (0 once one succeeds).',
    unit: '{failure}',
  });
  const renewalAge = meter.createObservableGauge(name('lease.renewal.age'), {
    description: 'Time since the last successful claim or renewal of the lease.',
    unit: 's',
  });
  const held = meter.createObservableGauge(name('worker_ids.held'), {
    description: "Worker IDs of the lease's namespace held by live leases.",
    unit: '{worker_id}',
  });
  const free = meter.createObservableGauge(name('worker_ids.free'), {
    description: "Worker IDs of the lease's namespace free to claim.",
    unit: '{worker_id}',
  });

  const observables: Observable[] = [
    issued,
    overflowWaits,
    clockBackEvents,
    ready,
    switches,
    leaseState,
    fenceHeadroom,
    clockOffset,
    consecutiveFailures,
    renewalAge,
    held,
    free,
  ];
  const observe: BatchObservableCallback = (result) => {
    for (const generator of generators) {
      const base: Attributes = { [METRIC_ATTRIBUTES.generator]: generator.name };
      const now = generator.status();
      result.observe(issued, now.issued, base);
      result.observe(overflowWaits, now.overflowWaits, base);
      result.observe(clockBackEvents, now.clockBackEvents, base);
      result.observe(ready, now.ready ? 1 : 0, base);
      const { lease: current } = now;
      if (current === undefined) continue;
      result.observe(switches, current.switches, base);
      for (const state of LEASE_STATES) {
        result.observe(leaseState, state === current.state ? 1 : 0, { ...base, [METRIC_ATTRIBUTES.leaseState]: state });
      }
      // No lease held (lost, switching, claiming) leaves no headroom: 0, rather than no point, which a cumulative
      // exporter would fill with the last value seen while the lease was held.
      result.observe(fenceHeadroom, (current.fenceInMs ?? 0) / 1000, base);
      if (current.clockOffsetMs !== null) result.observe(clockOffset, current.clockOffsetMs / 1000, base);
      result.observe(consecutiveFailures, current.renewalFailures, base);
      if (current.lastRenewalAt !== null) {
        result.observe(renewalAge, Math.max(0, now.nowMs - current.lastRenewalAt) / 1000, base);
      }
      const capacity = capacityOf(current);
      if (capacity !== null) {
        result.observe(held, capacity.held, base);
        result.observe(free, capacity.free, base);
      }
    }
  };
  meter.addBatchObservableCallback(observe, observables);
  const stopListening = listenToRenewals(meter, name, generators);

  return () => {
    meter.removeBatchObservableCallback(observe, observables);
    stopListening();
  };
}

/** The renewal histogram and failure counter, fed by each lease's renewal listener; none without a lease. */
function listenToRenewals(
  meter: Meter,
  name: (suffix: string) => string,
  generators: readonly InstrumentedGenerator[],
): () => void {
  const leased = generators.filter((generator) => generator.lease !== undefined);
  if (leased.length === 0) return () => undefined;
  const duration = meter.createHistogram(name('lease.renewal.duration'), {
    description: 'Lease renewal round trips to Redis, by outcome (renewed, recovered, lost, failed).',
    unit: 's',
    advice: { explicitBucketBoundaries: RENEWAL_BUCKETS_S },
  });
  const failures = meter.createCounter(name('lease.renewal.failures'), {
    description: 'Lease renewals that failed (no confirmed answer) or found the lease lost, by cause (`error.type`).',
    unit: '{failure}',
  });
  const stops = leased.map((generator) =>
    generator.lease!.onRenewal((sample: LeaseRenewalSample) => {
      const attributes: Attributes = {
        [METRIC_ATTRIBUTES.generator]: generator.name,
        [METRIC_ATTRIBUTES.renewalOutcome]: sample.outcome,
      };
      if (sample.cause !== null) attributes[METRIC_ATTRIBUTES.errorType] = sample.cause;
      duration.record(sample.durationMs / 1000, attributes);
      if (sample.outcome === 'failed' || sample.outcome === 'lost') failures.add(1, attributes);
    }),
  );
  return () => {
    for (const stop of stops) stop();
  };
}
