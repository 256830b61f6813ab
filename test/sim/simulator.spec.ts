/**
 * The lease simulator's search: random fault schedules against the real lease, none may break uniqueness, per-worker
 * order or liveness. In `npm run test:sim` (CI) it runs a fixed budget of 400 schedules from seed 1 (about 20 s on this
 * 2-core machine, up to 40 s under load), so that the run is the same every time; `npm run simulate` sets SIM_SECONDS
 * (a time budget), SIM_SEED, SIM_SCHEDULES, SIM_ROLLBACKS, SIM_WITHOUT and SIM_BUG, and for each of its workers
 * SIM_SEED_STRIDE and SIM_SUMMARY_FILE. Each schedule's seed is the run's seed plus its index times the stride (1 in
 * one process), so any failure replays from its seed.
 */
import { writeFileSync } from 'node:fs';
import { expect, it } from '@jest/globals';
import { FAULT_KINDS, describeReport, search } from './schedule.js';
import { replayCommand } from './shards.mjs';
import type { PlantedBug } from './world.js';

const SECONDS = process.env.SIM_SECONDS === undefined ? 300 : Number(process.env.SIM_SECONDS);
const SEED = Number(process.env.SIM_SEED ?? 1);
/** The step between this process's seeds: N when it is one of N workers (simulate.mjs --workers N). */
const SEED_STRIDE = Number(process.env.SIM_SEED_STRIDE ?? 1);
const MAX_SCHEDULES =
  process.env.SIM_SCHEDULES !== undefined
    ? Number(process.env.SIM_SCHEDULES)
    : process.env.SIM_SECONDS === undefined
      ? 400
      : undefined;
const ROLLBACKS = process.env.SIM_ROLLBACKS === '1';
/** Fault kinds to leave out (comma-separated), e.g. to look past a known hole. */
const WITHOUT = (process.env.SIM_WITHOUT ?? '').split(',').filter((kind) => kind !== '');
const MIX = WITHOUT.length === 0 ? undefined : { kinds: FAULT_KINDS.filter((kind) => !WITHOUT.includes(kind)) };
/** Every planted bug by name, so that a misspelt SIM_BUG fails instead of searching without one. */
const PLANTED_BUGS: Record<PlantedBug, true> = {
  floor: true,
  fence: true,
  'fence-and-ceiling': true,
  settling: true,
  'recovery-proof': true,
  'clock-check': true,
  'settle-one-ttl': true,
  'missing-record-resettles': true,
  'no-rollback-check': true,
  'cursor-kept': true,
  'cursor-kept-without-meta': true,
};
/** A planted bug (test-only seam), to see a search find it: `npm run simulate -- --bug settling`. */
const BUG =
  process.env.SIM_BUG === undefined || process.env.SIM_BUG === '' ? undefined : plantedBug(process.env.SIM_BUG);
/** Where a worker of simulate.mjs leaves its report as JSON, for the command to add up. */
const SUMMARY_FILE = process.env.SIM_SUMMARY_FILE;

function plantedBug(name: string): PlantedBug {
  if (!Object.hasOwn(PLANTED_BUGS, name)) {
    throw new Error(`unknown planted bug "${name}"; use one of ${Object.keys(PLANTED_BUGS).join(', ')}`);
  }
  return name as PlantedBug;
}

it(
  `finds no violation in random fault schedules (seed ${SEED}${SEED_STRIDE === 1 ? '' : `, stride ${SEED_STRIDE}`})`,
  async () => {
    const report = await search({
      seconds: SECONDS,
      seed: SEED,
      seedStride: SEED_STRIDE,
      maxSchedules: MAX_SCHEDULES,
      rollbacks: ROLLBACKS,
      mix: MIX,
      bug: BUG,
    });
    if (SUMMARY_FILE !== undefined) writeFileSync(SUMMARY_FILE, JSON.stringify(report));
    process.stdout.write(`${describeReport(report)}\n`);
    if (report.found !== undefined) {
      const replay = replayCommand({
        seed: report.found.seed,
        rollbacks: ROLLBACKS,
        without: WITHOUT.join(','),
        bug: BUG,
      });
      process.stdout.write(`replay it alone: ${replay}\n`);
      throw new Error(`${describeReport(report)}\nreplay it alone: ${replay}`);
    }
    expect(report.schedules).toBeGreaterThan(0);
  },
  (SECONDS + 180) * 1000,
);
