/**
 * Runs the benchmarks and prints markdown (ready to paste into the README) on stdout; progress goes to stderr.
 *
 *   npm run bench                 all benchmarks
 *   npm run bench -- ids          only those whose name contains "ids"
 *
 * BENCH_WINDOW_MS, BENCH_REPEATS and BENCH_SAMPLE shorten a run while working on a benchmark; BENCH_TYPEORM_GC=full
 * runs a full garbage collection before each TypeORM write instead of a minor one (see typeorm.bench.ts).
 */
import os from 'node:os';
import { markdownTable, settings, type Bench, type Target } from './harness.js';

/** One line per benchmark module; each default-exports `{ name, title, run({ settings, log }) }`. */
const BENCHES = [
  './ids.bench.js',
  './shards.bench.js',
  './forms.bench.js',
  './stalls.bench.js',
  './lease.bench.js',
  './scale.bench.js',
  './outage.bench.js',
  './http.bench.js',
  './typeorm.bench.js',
  './orm-columns.bench.js',
];

const filters = process.argv.slice(2);
const log = (line: string) => process.stderr.write(`${line}\n`);
const print = (text = '') => process.stdout.write(`${text}\n`);

if (typeof globalThis.gc !== 'function') {
  log('note: run with `node --expose-gc` (as `npm run bench` does) to collect garbage between measurements');
}

const cpus = os.cpus();
print('## Benchmarks');
print();
print(
  `${new Date().toISOString().slice(0, 10)} · ${cpus[0]?.model.trim() ?? 'unknown CPU'} · ${cpus.length} cores · ` +
    `Node ${process.version} · ${os.type()} ${os.release()} ${os.arch()} · load average ${os.loadavg()[0].toFixed(2)} at start`,
);

const targets: Target[] = [];
for (const path of BENCHES) {
  const { default: bench } = (await import(path)) as { default: Bench };
  if (filters.length > 0 && !filters.some((f) => bench.name.includes(f))) continue;
  log(`bench ${bench.name}`);
  const result = await bench.run({ settings, log });
  print();
  print(`### ${bench.title}`);
  for (const section of result.sections) {
    print();
    print(section);
  }
  targets.push(...result.targets);
}

if (targets.length > 0) {
  print();
  print('### Targets');
  print();
  print(
    markdownTable(
      ['target', 'measured', 'goal', 'result'],
      targets.map((t) => [t.name, t.measured, t.goal, t.verdict ?? (t.pass ? 'PASS' : 'MISS')]),
      ['left', 'right', 'right', 'center'],
    ),
  );
  const missed = targets.filter((t) => !t.pass).length;
  log(`${targets.length - missed} of ${targets.length} targets met`);
}
