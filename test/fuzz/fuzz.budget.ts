/**
 * How long the fuzz suite runs. Under `npm test` each property gets a fixed, small number of runs (the whole file
 * stays under 20 s); `npm run fuzz` sets FUZZ_SECONDS and the same properties share that time, or FUZZ_RUNS sets the
 * runs of each. FUZZ_SEED replays a run.
 */
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';

const SHORT_RUNS = 300;
const seconds = Number(process.env.FUZZ_SECONDS ?? 0);
const runs = Number(process.env.FUZZ_RUNS ?? 0);
const seed =
  process.env.FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED);

/** Whether this is the long run of `npm run fuzz`. */
export const LONG = seconds > 0 || runs > 0;

/** A property's time in the long run: FUZZ_SECONDS shared by the properties, the linear-time checks left out. */
export function timeLimitMs(properties: number): number | undefined {
  return seconds > 0 ? Math.floor((seconds * 1000 * 0.97) / properties) : undefined;
}

/** Jest's timeout for one property. */
export function testTimeoutMs(properties: number): number {
  return (timeLimitMs(properties) ?? 20_000) + 60_000;
}

const report: { name: string; runs: number; ms: number }[] = [];

/** Runs `property` within the budget, fails the test with fast-check's report (seed and counterexample). */
export function check<Ts>(name: string, property: fc.IProperty<Ts>, properties: number): void {
  const limit = timeLimitMs(properties);
  const started = performance.now();
  const details = fc.check(property, {
    seed,
    numRuns: limit !== undefined ? Number.MAX_SAFE_INTEGER : runs > 0 ? runs : SHORT_RUNS,
    interruptAfterTimeLimit: limit,
    markInterruptAsFailure: false,
  });
  report.push({ name, runs: details.numRuns, ms: Math.round(performance.now() - started) });
  if (details.failed) throw new Error(fc.defaultReportMessage(details) ?? `${name} failed`);
}

/** Writes what ran, for the README's figures: `.tmp/fuzz-report.json` in the long run. */
export function writeReport(): void {
  if (!LONG) return;
  const total = report.reduce((sum, entry) => sum + entry.runs, 0);
  mkdirSync('.tmp', { recursive: true });
  const summary = { seed, seconds, runs: total, node: process.version, properties: report };
  writeFileSync('.tmp/fuzz-report.json', `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(`fuzz: ${total} runs of ${report.length} properties, seed ${seed}\n`);
}
