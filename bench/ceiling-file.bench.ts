/**
 * The cost of `ceilingFile` on `next()`: the same generator with and without the ceiling file's permit, on a wide
 * layout whose cap does not bind, timed by mitata in alternating rounds; and how many times the file was written.
 *
 *   npm run build && npm run bench:build && node --expose-gc .bench/ceiling-file.bench.js
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { do_not_optimize, measure } from 'mitata';
import { SnowflakeGenerator, resolveLayout, systemClock } from 'nestjs-snowflake';
// Internal, on purpose: the ceiling file's source and writer, timed on a bare generator (no entry exports them).
import { CeilingFileWorkerSource } from '../dist/worker/ceiling-file.source.js';
import { writeCeiling } from '../dist/worker/ceiling-file.store.js';
import { collectGarbage, median } from './harness.js';

const ROUNDS = Number(process.env.BENCH_REPEATS ?? 3) * 2;
const layout = resolveLayout({ preset: 'twitter', datacenterBits: 0, workerBits: 2, sequenceBits: 20 });
const dir = mkdtempSync(join(tmpdir(), 'snowflake-ceiling-bench-'));
const path = join(dir, 'worker-1.json');

const plain = new SnowflakeGenerator({ layout, workerId: 1 });
const withFile = new SnowflakeGenerator({ layout, workerId: 1 });
const silent = { log: () => undefined, warn: () => undefined, error: (m: string) => process.stderr.write(`${m}\n`) };
const source = new CeilingFileWorkerSource('static', 1, 0, {
  path,
  stepMs: 2000,
  maxWaitMs: 3000,
  ifMissing: 'create',
});
const assignment = await source.start({
  layout,
  clock: systemClock,
  logger: silent,
  lastTimestamp: () => withFile.stats().lastTimestamp,
  reassign: () => undefined,
});
withFile.assign(assignment.workerId, assignment.datacenterId, assignment.floor, assignment.permit);
const ceilingOnDisk = () => (JSON.parse(readFileSync(path, 'utf8')) as { ceilingTicks: number }).ceilingTicks;
const firstCeiling = ceilingOnDisk();
let refused = 0;

const nextPlain = () => do_not_optimize(plain.next());
const nextWithFile = () => {
  try {
    return do_not_optimize(withFile.next());
  } catch {
    refused++;
    return undefined;
  }
};

async function nsPerCall(fn: () => unknown): Promise<number> {
  collectGarbage();
  return (await measure(fn)).p50;
}

const rounds: { plainNs: number; fileNs: number }[] = [];
const started = Date.now();
for (let round = 0; round < ROUNDS; round++) {
  const plainFirst = round % 2 === 0;
  const a = await nsPerCall(plainFirst ? nextPlain : nextWithFile);
  const b = await nsPerCall(plainFirst ? nextWithFile : nextPlain);
  const [plainNs, fileNs] = plainFirst ? [a, b] : [b, a];
  rounds.push({ plainNs, fileNs });
  process.stderr.write(
    `round ${round + 1}/${ROUNDS}: next() ${plainNs.toFixed(1)} ns, with ceilingFile ${fileNs.toFixed(1)} ns\n`,
  );
}
const elapsedS = (Date.now() - started) / 1000;
const advancedS = (ceilingOnDisk() - firstCeiling) / 1000;
await source.stop(withFile.stats().lastTimestamp);

// What one write costs the event loop: the temporary file, its fsync, the rename and the directory's fsync.
const record = { layout: 'bench', workerId: 9, datacenterId: 0, ceilingTicks: 1 };
const writeMs: number[] = [];
for (let i = 0; i < 20; i++) {
  const t0 = performance.now();
  writeCeiling(join(dir, 'cost.json'), record, layout);
  writeMs.push(performance.now() - t0);
}
rmSync(dir, { recursive: true, force: true });
const plainNs = median(rounds.map((r) => r.plainNs));
const fileNs = median(rounds.map((r) => r.fileNs));
const paired = median(rounds.map((r) => r.fileNs / r.plainNs));
console.log(
  `next() ${plainNs.toFixed(1)} ns, with ceilingFile ${fileNs.toFixed(1)} ns: ${(fileNs / plainNs).toFixed(2)}× ` +
    `(paired ${paired.toFixed(2)}×); ${refused} refusals; in ${elapsedS.toFixed(1)} s the ceiling on disk moved ` +
    `${advancedS.toFixed(1)} s ahead (stepMs 2000: a write every ~1 s); one write ${median(writeMs).toFixed(2)} ms ` +
    `(median of 20, max ${Math.max(...writeMs).toFixed(2)} ms)`,
);
