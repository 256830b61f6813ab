// The fault schedule: a pure function of the seed and the run's options, so that `--seed` replays the same faults
// at the same times against the same targets.

/**
 * mulberry32: a small, fast 32-bit PRNG; good enough to pick faults, and trivially reproducible. The same function as
 * test/support/seeded-random.ts, which the TypeScript tests import: this run is plain Node and cannot load a .ts file.
 */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const between = (rng, low, high) => Math.round(low + rng() * (high - low));

/** The Redis processes are one resource for the whole run; the others are per child. */
const resourceOf = (resource, target) => (resource === 'redis' || target === null ? resource : `${resource}:${target}`);

/**
 * Every fault kind: its group (for `--faults`), whether it targets one child, the resources it holds (so that two
 * faults never fight over one process, one clock or the Redis processes), how often it is drawn, and its parameters.
 * `span` is how long the resources stay held, including time for a restarted process to boot.
 */
export const FAULT_KINDS = {
  kill: {
    group: 'process',
    perChild: true,
    holds: ['proc'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const downMs = between(rng, 200, 2 * ttlMs);
      return { downMs, span: downMs + 3000 };
    },
  },
  term: {
    group: 'process',
    perChild: true,
    holds: ['proc'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const downMs = between(rng, 200, 2 * ttlMs);
      return { downMs, span: downMs + 3000 };
    },
  },
  stop: {
    group: 'process',
    perChild: true,
    holds: ['proc'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const pauseMs = between(rng, 1.2 * ttlMs, 2.5 * ttlMs);
      return { pauseMs, span: pauseMs + 1500 };
    },
  },
  stall: {
    group: 'process',
    perChild: true,
    holds: ['proc'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const stallMs = between(rng, 1.2 * ttlMs, 2 * ttlMs);
      return { stallMs, span: stallMs + 1500 };
    },
  },
  partition: {
    group: 'network',
    perChild: true,
    holds: ['net'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const holdMs = between(rng, 0.3 * ttlMs, 2.5 * ttlMs);
      return { holdMs, heal: rng() < 0.5 ? 'resume' : 'reset', span: holdMs + 500 };
    },
  },
  latency: {
    group: 'network',
    perChild: true,
    holds: ['net'],
    weight: 0.8,
    draw: (rng, { ttlMs }) => {
      const latencyMs = between(rng, 20, ttlMs / 3);
      const forMs = between(rng, 2000, 8000);
      return { latencyMs, forMs, span: forMs };
    },
  },
  reset: {
    group: 'network',
    perChild: true,
    holds: ['net'],
    weight: 0.8,
    draw: () => ({ span: 200 }),
  },
  'redis-restart': {
    group: 'redis',
    holds: ['redis'],
    weight: 0.8,
    draw: (rng, { ttlMs }) => {
      const downMs = rng() < 0.6 ? between(rng, 50, 1000) : between(rng, ttlMs, 2 * ttlMs);
      return { downMs, span: downMs + 1500 };
    },
  },
  'redis-snapshot': {
    group: 'redis',
    holds: ['redis'],
    weight: 0.6,
    draw: (rng, { ttlMs }) => {
      const restoreAfterMs = between(rng, ttlMs, 4 * ttlMs);
      const downMs = between(rng, 50, 1000);
      return { restoreAfterMs, downMs, span: restoreAfterMs + downMs + 1500 };
    },
  },
  flushall: { group: 'redis', holds: [], weight: 0.5, draw: () => ({ span: 0 }) },
  'del-all': { group: 'keys', holds: [], weight: 0.4, draw: () => ({ span: 0 }) },
  'del-cursor': { group: 'keys', holds: [], weight: 0.3, draw: () => ({ span: 0 }) },
  'del-expiry': { group: 'keys', holds: [], weight: 0.3, draw: () => ({ span: 0 }) },
  'del-meta': { group: 'keys', holds: [], weight: 0.3, draw: () => ({ span: 0 }) },
  'del-records': {
    group: 'keys',
    holds: [],
    weight: 0.4,
    draw: (rng) => ({ fraction: Math.round((0.3 + rng() * 0.5) * 100) / 100, span: 0 }),
  },
  'del-some': {
    group: 'keys',
    holds: [],
    weight: 0.4,
    draw: (rng) => ({ fraction: Math.round((0.3 + rng() * 0.5) * 100) / 100, span: 0 }),
  },
  'del-released': {
    // The record of one free ID (released or expired), ideally once the cursor is spent so that the next claim
    // takes a reused ID: it is handed out without a floor, one fence margin after it lapsed (the time rule).
    group: 'keys',
    holds: [],
    weight: 0.5,
    draw: (rng) => ({ waitCursorMs: between(rng, 0, 8000), pick: Math.floor(rng() * 1000), span: 0 }),
  },
  'del-claim': {
    group: 'keys',
    perChild: true,
    holds: ['proc'],
    weight: 0.5,
    draw: (rng) => ({ fraction: Math.round((0.3 + rng() * 0.5) * 100) / 100, span: 4000 }),
  },
  evict: {
    // allkeys-lru under memory pressure: the keys no script reads go first (free IDs' records), then any.
    group: 'redis',
    holds: ['redis'],
    weight: 0.5,
    draw: (rng) => ({ headroomKb: between(rng, 256, 1024), span: 3000 }),
  },
  rollback: {
    // Older data back in the same redis-server process (same run_id): a full resync from a stale server, or
    // DEBUG RELOAD NOSAVE of a snapshot taken earlier. Only the replication ID or the revisions can tell.
    group: 'redis',
    holds: ['redis'],
    weight: 0.6,
    draw: (rng, { ttlMs }) => {
      const restoreAfterMs = between(rng, ttlMs, 4 * ttlMs);
      const via = rng() < 0.5 ? 'replicaof' : 'reload';
      return { via, restoreAfterMs, span: restoreAfterMs + 2000 };
    },
  },
  'restart-config': {
    // One child restarted with another contract for a while (a deployment with a stale configuration): it must be
    // refused while the namespace has live leases, or settle; then it is restarted with the run's settings.
    group: 'config',
    perChild: true,
    holds: ['proc'],
    weight: 0.6,
    draw: (rng, { ttlMs, toleranceMs }) => {
      const setting = ['ttlMs', 'fenceMarginMs', 'clockBackToleranceMs'][Math.floor(rng() * 3)];
      let value;
      if (setting === 'ttlMs') value = ttlMs >= 2000 ? 1000 : Math.min(10_000, 2 * ttlMs);
      else if (setting === 'fenceMarginMs') value = Math.floor(ttlMs / 5) + between(rng, 50, 250);
      else value = rng() < 0.5 ? Math.floor(toleranceMs / 2) : toleranceMs + between(rng, 10, 50);
      const forMs = between(rng, 3000, 10_000);
      return { setting, value, forMs, span: forMs + 5000 };
    },
  },
  'clock-back': {
    group: 'clock',
    perChild: true,
    holds: ['clock'],
    weight: 0.7,
    draw: (rng, { toleranceMs }) => {
      // Mostly beyond the generator's tolerance (the worker must switch ID), sometimes within it.
      const stepMs = rng() < 0.25 ? -between(rng, 10, toleranceMs * 0.8) : -between(rng, 2 * toleranceMs, 5000);
      const forMs = between(rng, 2000, 10_000);
      return { stepMs, forMs, span: forMs };
    },
  },
  'clock-forward': {
    group: 'clock',
    perChild: true,
    holds: ['clock'],
    weight: 0.7,
    draw: (rng) => {
      const stepMs = rng() < 0.3 ? 30_000 : between(rng, 300, 5000);
      const forMs = between(rng, 1000, 8000);
      return { stepMs, forMs, span: forMs };
    },
  },
  'clock-loss': {
    // The way a clock that was off leaves IDs behind that only Redis remembered: a step (ahead, or behind past the
    // tolerance: a worker-ID switch), set right, then Redis loses its data: flushed, restarted empty, or restarted
    // from a snapshot taken before the step.
    group: 'clock',
    perChild: true,
    holds: ['clock', 'redis'],
    weight: 0.6,
    draw: (rng, { toleranceMs }) => {
      const ahead = rng() < 0.6;
      const stepMs = ahead ? between(rng, 1000, 10_000) : -between(rng, 2 * toleranceMs, 5000);
      const forMs = between(rng, 1000, 5000);
      const lossAfterMs = between(rng, 200, 2000);
      const loss = ['flushall', 'restart', 'snapshot'][Math.floor(rng() * 3)];
      return { stepMs, forMs, lossAfterMs, loss, span: forMs + lossAfterMs + 2000 };
    },
  },
  skew: {
    group: 'clock',
    perChild: true,
    holds: ['proc', 'clock'],
    weight: 0.5,
    draw: (rng) => {
      const sign = rng() < 0.5 ? -1 : 1;
      const skewMs = sign * (rng() < 0.4 ? between(rng, 30, 150) : between(rng, 1000, 4000));
      const forMs = between(rng, 8000, 20_000);
      return { skewMs, forMs, span: forMs + 6000 };
    },
  },
  failover: {
    group: 'sentinel',
    sentinelOnly: true,
    holds: ['redis'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const downMs = between(rng, ttlMs, 3 * ttlMs);
      return { downMs, span: downMs + 8000 };
    },
  },
  'split-brain': {
    group: 'sentinel',
    sentinelOnly: true,
    holds: ['redis'],
    weight: 1,
    draw: (rng, { ttlMs }) => {
      const holdMs = between(rng, 2 * ttlMs, 5 * ttlMs);
      return { holdMs, heal: rng() < 0.5 ? 'resume' : 'reset', span: holdMs + 8000 };
    },
  },
  'master-restart': {
    // The master restarted in place faster than the Sentinels' down-after-milliseconds (500 ms): no failover, but
    // a new run_id, and either its data from a SAVE just before or none (the replicas then resync to empty).
    group: 'sentinel',
    sentinelOnly: true,
    holds: ['redis'],
    weight: 0.8,
    draw: (rng) => ({ data: rng() < 0.5 ? 'snapshot' : 'empty', span: 5000 }),
  },
};

export const FAULT_GROUPS = [...new Set(Object.values(FAULT_KINDS).map((k) => k.group))];

/**
 * The kinds a `--faults` list selects: kind names and group names (process, network, redis, keys, config, clock,
 * sentinel), comma-separated; everything that applies when absent.
 */
export function selectKinds(list, { sentinel, clock }) {
  const applicable = Object.keys(FAULT_KINDS).filter(
    (kind) => (sentinel || !FAULT_KINDS[kind].sentinelOnly) && (clock || FAULT_KINDS[kind].group !== 'clock'),
  );
  if (list === undefined || list === '') return applicable;
  const selected = new Set();
  for (const name of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const matches = Object.keys(FAULT_KINDS).filter((kind) => kind === name || FAULT_KINDS[kind].group === name);
    if (matches.length === 0) {
      throw new Error(
        `unknown fault kind "${name}": kinds are ${Object.keys(FAULT_KINDS).join(', ')}; groups are ${FAULT_GROUPS.join(', ')}`,
      );
    }
    for (const kind of matches) if (applicable.includes(kind)) selected.add(kind);
  }
  return [...selected];
}

/**
 * Faults from `warmupMs` until `tailMs` before the end, one every 1 to 4 s; those with a duration overlap the next
 * ones, but never two on the same resource (a child's process, network path or clock; the Redis processes).
 */
export function makeSchedule({ seed, durationMs, processes, ttlMs, toleranceMs, kinds, warmupMs, tailMs }) {
  const rng = mulberry32(seed);
  const busyUntil = new Map();
  const free = (resource, at) => (busyUntil.get(resource) ?? 0) <= at;
  const totalWeight = kinds.reduce((sum, kind) => sum + FAULT_KINDS[kind].weight, 0);
  const faults = [];
  let at = warmupMs;
  while (kinds.length > 0 && at < durationMs - tailMs) {
    let pick = rng() * totalWeight;
    const kind = kinds.find((k) => (pick -= FAULT_KINDS[k].weight) < 0) ?? kinds[kinds.length - 1];
    const spec = FAULT_KINDS[kind];
    const { span, ...params } = spec.draw(rng, { ttlMs, toleranceMs });
    let target = null;
    let ok;
    if (spec.perChild) {
      const start = Math.floor(rng() * processes);
      for (let i = 0; i < processes && target === null; i++) {
        const candidate = (start + i) % processes;
        if (spec.holds.every((r) => free(resourceOf(r, candidate), at))) target = candidate;
      }
      ok = target !== null;
    } else {
      ok = spec.holds.every((r) => free(r, at));
    }
    if (ok) {
      faults.push({ id: faults.length + 1, at, kind, target, ...params });
      for (const resource of spec.holds) {
        busyUntil.set(resourceOf(resource, target), at + span);
      }
    }
    at += between(rng, 1000, 4000);
  }
  return faults;
}
