/**
 * The lease simulator's search: random fault schedules against the real lease, none may break uniqueness, per-worker
 * order or liveness. In `npm run test:sim` (CI) it runs a fixed budget of 1,000 schedules from seed 1, so that the run is
 * the same every time; the settings of search-env.ts change that. `npm run simulate` runs the same search outside
 * Jest (search-main.ts), where it is faster.
 */
import { expect, it } from '@jest/globals';
import { describeReport, search } from './schedule.js';
import { searchSettings } from './search-env.js';
import { replayCommand } from './shards.mjs';

const { options, replay } = searchSettings();

it(
  `finds no violation in random fault schedules (seed ${options.seed}${options.seedStride === 1 ? '' : `, stride ${options.seedStride}`})`,
  async () => {
    const report = await search(options);
    process.stdout.write(`${describeReport(report)}\n`);
    if (report.found !== undefined) {
      const line = replayCommand({ seed: report.found.seed, ...replay });
      process.stdout.write(`replay it alone: ${line}\n`);
      throw new Error(`${describeReport(report)}\nreplay it alone: ${line}`);
    }
    expect(report.schedules).toBeGreaterThan(0);
  },
  (options.seconds + 180) * 1000,
);
