/**
 * The cost of a ceiling file on `next()`: a fixed worker ID with and without `ceilingFile`, against a bare
 * `Date.now()`, timed by mitata in alternating rounds. The file is raised (one write and fsync) every `aheadMs / 2`
 * off the issuing path, so `next()` should cost the same with it; the raises done during the run are counted.
 *
 *   npm run build && node --expose-gc bench/ceiling.bench.js
 *
 * BENCH_REPEATS sets the rounds (default 6).
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { do_not_optimize, measure } from 'mitata';
import { IdService, SNOWFLAKE_WORKER_SOURCE, SnowflakeModule } from '../dist/index.js';
import { collectGarbage, markdownTable, median } from './harness.js';

const repeats = Number(process.env.BENCH_REPEATS ?? 6);
// A layout whose cap does not bind (2^20 IDs per ms), so that the time measured is the call's, not the sequence's.
const layout = { preset: 'twitter', datacenterBits: 0, workerBits: 2, sequenceBits: 20 };
const dir = mkdtempSync(join(tmpdir(), 'snowflake-ceiling-bench-'));

async function app(options) {
  const context = await NestFactory.createApplicationContext(SnowflakeModule.forRoot({ layout, ...options }), {
    logger: false,
  });
  return { context, ids: context.get(IdService), source: context.get(SNOWFLAKE_WORKER_SOURCE) };
}

async function nsPerCall(fn) {
  collectGarbage();
  return (await measure(fn)).p50;
}

const plain = await app({ workerId: 1 });
const filed = await app({ workerId: 2, ceilingFile: join(dir, 'worker-2.json') });
const calls = {
  'Date.now()': () => do_not_optimize(Date.now()),
  '`next()`, fixed worker ID': () => do_not_optimize(plain.ids.next()),
  '`next()`, fixed worker ID with `ceilingFile`': () => do_not_optimize(filed.ids.next()),
};
const names = Object.keys(calls);
const results = Object.fromEntries(names.map((name) => [name, []]));
const started = performance.now();
for (let round = 0; round < repeats; round++) {
  // Rotating which goes first, so that a drift in the machine's state within a round favours none.
  const order = names.map((_, i) => names[(i + round) % names.length]);
  for (const name of order) results[name].push(await nsPerCall(calls[name]));
  process.stderr.write(
    `round ${round + 1}/${repeats}: ${order.map((n) => `${n} ${results[n].at(-1).toFixed(1)} ns`).join(', ')}\n`,
  );
}
const seconds = (performance.now() - started) / 1000;
const nowNs = median(results['Date.now()']);
const plainNs = median(results[names[1]]);
process.stdout.write(
  `${markdownTable(
    ['call', 'ns per call (median)', 'against `Date.now()`', 'against `next()` without the file'],
    names.map((name) => {
      const ns = median(results[name]);
      return [name, ns.toFixed(1), `${(ns / nowNs).toFixed(2)}×`, `${(ns / plainNs).toFixed(2)}×`];
    }),
  )}\n\nRaises of the ceiling file during the ${seconds.toFixed(0)} s run: ${filed.source.raises.total} ` +
    `(one per ${(seconds / Math.max(1, filed.source.raises.total)).toFixed(1)} s), ${filed.source.raises.blocking} of ` +
    'them written on the calling thread because the event loop had not turned since the raise fell due.\n',
);
await plain.context.close();
await filed.context.close();
rmSync(dir, { recursive: true, force: true });
