/**
 * A budget of the lease simulator in `npm test` (SIM_SECONDS, 30 s by default; `npm run simulate` runs longer):
 * random fault schedules against the real lease, none may break uniqueness, per-worker order or liveness.
 * SIM_SEED replays a run (each schedule's seed is the run's seed plus its index).
 */
import { expect, it } from '@jest/globals';
import { describeReport, search } from './schedule.js';

const SECONDS = Number(process.env.SIM_SECONDS ?? 30);
const SEED = Number(process.env.SIM_SEED ?? Date.now() % 1_000_000_000);
const MAX_SCHEDULES = process.env.SIM_SCHEDULES === undefined ? undefined : Number(process.env.SIM_SCHEDULES);

it(
  `finds no violation in ${SECONDS} s of random fault schedules (seed ${SEED})`,
  async () => {
    const report = await search({ seconds: SECONDS, seed: SEED, maxSchedules: MAX_SCHEDULES });
    process.stdout.write(`${describeReport(report)}\n`);
    if (report.found !== undefined) throw new Error(describeReport(report));
    expect(report.schedules).toBeGreaterThan(0);
  },
  (SECONDS + 180) * 1000,
);
