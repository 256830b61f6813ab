/**
 * The lease simulator's search: random fault schedules against the real lease, none may break uniqueness, per-worker
 * order or liveness. In `npm run test:sim` (CI) it runs a fixed budget of 400 schedules from seed 1 (about 20 s on this
 * 2-core machine, up to 40 s under load), so that the run is the same every time; `npm run simulate` sets SIM_SECONDS
 * (a time budget), SIM_SEED, SIM_SCHEDULES, SIM_ROLLBACKS and SIM_WITHOUT. Each schedule's seed is the run's seed plus
 * its index, so any failure replays from its seed.
 */
import { expect, it } from '@jest/globals';
import { FAULT_KINDS, describeReport, search } from './schedule.js';

const SECONDS = process.env.SIM_SECONDS === undefined ? 300 : Number(process.env.SIM_SECONDS);
const SEED = Number(process.env.SIM_SEED ?? 1);
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

it(
  `finds no violation in random fault schedules (seed ${SEED})`,
  async () => {
    const report = await search({
      seconds: SECONDS,
      seed: SEED,
      maxSchedules: MAX_SCHEDULES,
      rollbacks: ROLLBACKS,
      mix: MIX,
    });
    process.stdout.write(`${describeReport(report)}\n`);
    if (report.found !== undefined) throw new Error(describeReport(report));
    expect(report.schedules).toBeGreaterThan(0);
  },
  (SECONDS + 180) * 1000,
);
