/**
 * One worker of `npm run simulate` (simulate.mjs): the search in a plain Node process, bundled by simulate.mjs (or
 * compiled on load by tsx: `node --import tsx test/sim/search-main.ts`), its settings from the environment (search-env.ts). Outside Jest the search runs about twice as many
 * schedules per second: Jest tracks every promise for its test context (an AsyncLocalStorage) and runs the code in a
 * VM context, and the simulator lives on promises. Prints the report and exits 1 on a violation, 0 otherwise.
 */
import { writeFileSync } from 'node:fs';
import { describeReport, search } from './schedule.js';
import { searchSettings } from './search-env.js';
import { replayCommand } from './shards.mjs';

const settings = searchSettings();
const report = await search(settings.options);
if (settings.summaryFile !== undefined) writeFileSync(settings.summaryFile, JSON.stringify(report));
process.stdout.write(`${describeReport(report)}\n`);
if (report.found !== undefined) {
  process.stdout.write(`replay it alone: ${replayCommand({ seed: report.found.seed, ...settings.replay })}\n`);
  process.exitCode = 1;
}
