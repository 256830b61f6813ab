/**
 * The search's settings from the environment, as `npm run simulate` (simulate.mjs) hands them to each worker and as
 * `npm run test:sim` leaves them unset: SIM_SECONDS (a time budget), SIM_SEED, SIM_SCHEDULES, SIM_ROLLBACKS,
 * SIM_WITHOUT, SIM_BUG, SIM_LUA, and for each of simulate.mjs's workers SIM_SEED_STRIDE and SIM_SUMMARY_FILE. Each
 * schedule's seed is the run's seed plus its index times the stride (1 in one process), so any failure replays from
 * its seed.
 */
import { FAULT_KINDS, type SearchOptions } from './schedule.js';
import type { PlantedBug } from './world.js';

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
  'contract-not-held-back': true,
  'layout-unchecked': true,
  'contract-margin-unchecked': true,
  'lapse-unchecked': true,
  'cluster-unconfirmed': true,
};

export interface SearchSettings {
  readonly options: SearchOptions;
  /** Where a worker of simulate.mjs leaves its report as JSON, for the command to add up. */
  readonly summaryFile: string | undefined;
  /** What the replay line of a failure repeats. */
  readonly replay: { rollbacks: boolean; without: string; bug: PlantedBug | undefined };
}

export function searchSettings(env: NodeJS.ProcessEnv = process.env): SearchSettings {
  const seconds = env.SIM_SECONDS === undefined ? 300 : Number(env.SIM_SECONDS);
  // Without a time budget (npm run test:sim), a fixed number of schedules, so that the run is the same every time.
  const maxSchedules =
    env.SIM_SCHEDULES !== undefined ? Number(env.SIM_SCHEDULES) : env.SIM_SECONDS === undefined ? 1000 : undefined;
  const rollbacks = env.SIM_ROLLBACKS === '1';
  // Fault kinds to leave out (comma-separated), e.g. to look past a known hole.
  const without = (env.SIM_WITHOUT ?? '').split(',').filter((kind) => kind !== '');
  const bug = env.SIM_BUG === undefined || env.SIM_BUG === '' ? undefined : plantedBug(env.SIM_BUG);
  return {
    options: {
      seconds,
      seed: Number(env.SIM_SEED ?? 1),
      seedStride: Number(env.SIM_SEED_STRIDE ?? 1),
      maxSchedules,
      rollbacks,
      mix: without.length === 0 ? undefined : { kinds: FAULT_KINDS.filter((kind) => !without.includes(kind)) },
      bug,
    },
    summaryFile: env.SIM_SUMMARY_FILE,
    replay: { rollbacks, without: without.join(','), bug },
  };
}

function plantedBug(name: string): PlantedBug {
  if (!Object.hasOwn(PLANTED_BUGS, name)) {
    throw new Error(`unknown planted bug "${name}"; use one of ${Object.keys(PLANTED_BUGS).join(', ')}`);
  }
  return name as PlantedBug;
}
