/**
 * How `npm run simulate -- --workers N` splits one search over N Jest processes and puts their results together again:
 * pure functions, no processes or files (simulate.mjs runs those), so that shards.spec.ts covers the split, the totals
 * and the exit code. Plain JavaScript, so that the command can import it without Jest's compiler (types: shards.d.mts).
 *
 * The split keeps every seed reproducible. One process runs the seeds seed, seed + 1, seed + 2, …; worker k of N runs
 * seed + k, seed + k + N, …, so each seed belongs to one worker, and a failing seed replays alone, in one process,
 * with `--seed S --schedules 1`.
 */

import { noFigures } from './report-figures.mjs';

/**
 * The workers' shares. With a schedule count, worker k takes the schedule indices ≡ k (mod N) below it, so the shares
 * add up to the count and cover the same seeds as one process would; never more workers than schedules.
 */
export function planShards({ seed, schedules, workers }) {
  const count = schedules === undefined ? workers : Math.max(1, Math.min(workers, schedules));
  return Array.from({ length: count }, (_, index) => ({
    index,
    seed: seed + index,
    stride: count,
    schedules: schedules === undefined ? undefined : Math.ceil((schedules - index) / count),
  }));
}

/** The seeds a share runs, in words: "seeds 2, 4, 6, …". */
export function describeSeeds(share) {
  if (share.schedules !== undefined && share.schedules <= 3) {
    const seeds = Array.from({ length: share.schedules }, (_, i) => share.seed + i * share.stride);
    return `seed${seeds.length === 1 ? '' : 's'} ${seeds.join(', ')}`;
  }
  return `seeds ${[0, 1, 2].map((i) => share.seed + i * share.stride).join(', ')}, …`;
}

/**
 * The workers' figures added up. The workers run side by side, so the wall time is the slowest one's (each measures
 * its search without Jest's start-up, as a single run does) and the rate is all schedules over it.
 */
export function combineFigures(figures) {
  const total = noFigures();
  for (const one of figures) {
    for (const sum of ['schedules', 'simulatedMs', 'ids', 'scripts', 'pastFence', 'otherLayoutIds'])
      total[sum] += one[sum];
    total.wallMs = Math.max(total.wallMs, one.wallMs);
    total.worstRecoveryMs = Math.max(total.worstRecoveryMs, one.worstRecoveryMs);
    for (const [kind, n] of Object.entries(one.faultsByKind))
      total.faultsByKind[kind] = (total.faultsByKind[kind] ?? 0) + n;
  }
  return total;
}

/**
 * A worker is clean when its Jest process exited 0 after writing a summary without a violation. A worker that found
 * a violation, crashed, ended without a summary, or was stopped because another one failed is not.
 */
export function isClean(worker) {
  return worker.exitCode === 0 && worker.summary !== undefined && worker.summary.found === undefined;
}

/** The run's exit code: 0 only when every worker is clean, as one process exits 0 only when its search is. */
export function exitCode(workers) {
  return workers.length > 0 && workers.every(isClean) ? 0 : 1;
}

/** The command that replays one seed alone, with the flags of the run that found it. */
export function replayCommand({ seed, rollbacks, without, bug }) {
  const flags = [`--seed ${seed}`, '--schedules 1'];
  if (rollbacks) flags.push('--rollbacks');
  if (without !== undefined && without !== '') flags.push(`--without ${without}`);
  if (bug !== undefined && bug !== '') flags.push(`--bug ${bug}`);
  return `npm run simulate -- ${flags.join(' ')}`;
}
