/**
 * `npm run simulate -- --workers N`: the split of one search over N processes keeps its seeds (each once, each
 * replayable alone), the totals add up, and one failing worker fails the run.
 */
import { describe, expect, it } from '@jest/globals';
import { noFigures, type SearchFigures } from './report-figures.mjs';
import { combineFigures, describeSeeds, exitCode, planShards, replayCommand, type Share } from './shards.mjs';

/** The seeds a share runs, as search() derives them: seed + i × stride. */
function seedsOf(share: Share): number[] {
  return Array.from({ length: share.schedules! }, (_, i) => share.seed + i * share.stride);
}

function figures(overrides: Partial<SearchFigures>): SearchFigures {
  return { ...noFigures(), ...overrides };
}

const clean = { exitCode: 0, summary: figures({ schedules: 10 }) };
const violation = { exitCode: 1, summary: { ...figures({ schedules: 3 }), found: { seed: 8 } } };

describe('the workers of npm run simulate', () => {
  it.each([
    [1, 400, 1],
    [2, 400, 1],
    [2, 7, 1000],
    [3, 10, 5],
  ])('with %i workers and %i schedules from seed %i, runs the seeds one process would, each once', (n, total, seed) => {
    const plan = planShards({ seed, schedules: total, workers: n });
    expect(plan).toHaveLength(n);
    expect(plan.reduce((sum, share) => sum + share.schedules!, 0)).toBe(total);
    const seeds = plan.flatMap(seedsOf).sort((a, b) => a - b);
    expect(seeds).toEqual(Array.from({ length: total }, (_, i) => seed + i));
  });

  it('splits an uneven count as evenly as it goes, the first workers taking one more', () => {
    expect(planShards({ seed: 1, schedules: 7, workers: 2 }).map((share) => share.schedules)).toEqual([4, 3]);
  });

  it('never starts more workers than schedules, so a replay with --schedules 1 runs in one process', () => {
    const plan = planShards({ seed: 42, schedules: 1, workers: 2 });
    expect(plan).toEqual([{ index: 0, seed: 42, stride: 1, schedules: 1 }]);
  });

  it('on a time budget, gives each worker a residue of the seeds and no count', () => {
    const plan = planShards({ seed: 1, schedules: undefined, workers: 2 });
    expect(plan.map((share) => [share.seed, share.stride, share.schedules])).toEqual([
      [1, 2, undefined],
      [2, 2, undefined],
    ]);
    expect(plan.map((share) => describeSeeds(share))).toEqual(['seeds 1, 3, 5, …', 'seeds 2, 4, 6, …']);
  });

  it('adds the figures up; the wall time and the slowest recovery are the largest, not sums', () => {
    const total = combineFigures([
      figures({
        schedules: 500,
        wallMs: 30_000,
        simulatedMs: 100,
        ids: 7,
        scripts: 9,
        otherLayoutIds: 5,
        faultsByKind: { kill: 2, pause: 1 },
        worstRecoveryMs: 20_000,
      }),
      figures({
        schedules: 520,
        wallMs: 30_400,
        simulatedMs: 50,
        ids: 3,
        scripts: 1,
        pastFence: 4,
        otherLayoutIds: 2,
        faultsByKind: { kill: 1, flushall: 5 },
        worstRecoveryMs: 24_000,
      }),
    ]);
    expect(total).toEqual({
      schedules: 1020,
      wallMs: 30_400,
      simulatedMs: 150,
      ids: 10,
      scripts: 10,
      pastFence: 4,
      otherLayoutIds: 7,
      faultsByKind: { kill: 3, pause: 1, flushall: 5 },
      worstRecoveryMs: 24_000,
    });
  });

  it('exits 0 only when every worker finished clean', () => {
    expect(exitCode([clean, clean])).toBe(0);
    expect(exitCode([clean])).toBe(0);
  });

  it('exits 1 when any worker found a violation, crashed or wrote no report', () => {
    expect(exitCode([clean, violation])).toBe(1);
    expect(exitCode([violation, clean])).toBe(1);
    // A violation is a failure even if its process somehow exited 0.
    expect(exitCode([clean, { ...violation, exitCode: 0 }])).toBe(1);
    expect(exitCode([clean, { exitCode: 1, summary: undefined }])).toBe(1);
    // Killed (stopped after another worker failed, or by a signal): no exit code, no report.
    expect(exitCode([clean, { exitCode: null, summary: undefined }])).toBe(1);
    // A report written, then a failing assertion after it (no schedule run).
    expect(exitCode([clean, { exitCode: 1, summary: figures({}) }])).toBe(1);
    expect(exitCode([])).toBe(1);
  });

  it('prints a replay of the failing seed alone, with the flags of the run', () => {
    expect(replayCommand({ seed: 8 })).toBe('npm run simulate -- --seed 8 --schedules 1');
    expect(replayCommand({ seed: 8, rollbacks: true, without: 'migrate,failover', bug: 'settling' })).toBe(
      'npm run simulate -- --seed 8 --schedules 1 --rollbacks --without migrate,failover --bug settling',
    );
  });
});
