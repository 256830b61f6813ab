/**
 * TypeORM bulk insert: 10,000 rows whose IDs `@GeneratedId()` fills, against the same rows with IDs assigned by hand
 * (`ids.next()` while building them), in one run, on one SQLite file.
 *
 * The generated rows go through a Nest app booted as users do (SnowflakeModule, TypeOrmModule and
 * SnowflakeTypeOrmModule, nothing registered by hand); the hand-assigned rows through a plain DataSource on the same
 * file without the subscriber, as an app without the integration would. Each round times one of each, back to back in alternating order, each after a minor
 * garbage collection. The overhead is reported two ways: the median of the rounds' ratios of wall time (both halves
 * of a ratio share the machine's state) and the ratio of the two sides' median times; the target takes the larger.
 *
 * Rows come in two shapes, because V8 charges for adding a property to an object literal that was built without
 * it (a separate property store per object), whoever adds it: entity instances (`repository.create()`, whose class
 * declares `id`, the target case), and plain objects built without `id` against literals that include it. The second
 * shows what a user pays for passing plain objects; the fix is the first.
 *
 *   npm run build && npm run bench:build && node --expose-gc .bench/typeorm.bench.js
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import Database from 'better-sqlite3';
import { Column, DataSource, Entity, PrimaryColumn, type DataSourceOptions, type Repository } from 'typeorm';
import { IdService, SnowflakeModule } from 'nestjs-snowflake';
import { GeneratedId, safeIntegerDriver, SnowflakeTypeOrmModule } from 'nestjs-snowflake/typeorm';
import {
  type Bench,
  type BenchContext,
  type Log,
  formatPercent,
  markdownTable,
  median,
  settings as defaultSettings,
} from './harness.js';

const ROWS = 10_000;
const TARGET_OVERHEAD = 0.05;

// Entities as an app declares them. With ES2022 and `useDefineForClassFields` (TypeScript's default there), each
// declared field is an own property of every instance, `id` included, as in apps.
@Entity('bench_generated_row')
class GeneratedRow {
  @GeneratedId()
  id!: bigint;

  @Column({ type: 'int' })
  n!: number;

  @Column({ type: 'varchar' })
  label!: string;
}

@Entity('bench_manual_row')
class ManualRow {
  @PrimaryColumn({ type: 'bigint' })
  id!: bigint;

  @Column({ type: 'int' })
  n!: number;

  @Column({ type: 'varchar' })
  label!: string;
}

type Row = GeneratedRow | ManualRow;
type Side = 'generated' | 'manual';

const sqliteOptions = (database: string, entities: DataSourceOptions['entities']): DataSourceOptions => ({
  type: 'better-sqlite3',
  database,
  driver: safeIntegerDriver(Database),
  // WAL with synchronous=NORMAL, the usual setting for SQLite apps: commits do not wait for the disk, whose flush
  // times would otherwise swamp the comparison.
  enableWAL: true,
  prepareDatabase: (db: Database.Database) => void db.pragma('synchronous = NORMAL'),
  entities,
  synchronize: true,
});

async function boot(database: string) {
  class BenchApp {}
  Module({
    imports: [
      SnowflakeModule.forRoot({ workerId: 1 }),
      TypeOrmModule.forRoot(sqliteOptions(database, [GeneratedRow])),
      SnowflakeTypeOrmModule,
    ],
  })(BenchApp);
  return NestFactory.createApplicationContext(BenchApp, { logger: false });
}

/**
 * Empties V8's young generation, so that each timed write starts with the same room before its first scavenge. Not a
 * full collection: that can also throw away optimised code whose embedded objects died (TypeORM's per-query
 * objects), so every timed write would start partly unoptimised, as no app does before each insert, and the side
 * with more per-row code to re-optimise (the subscriber broadcast) would pay most of it. Major collections still
 * happen when the heap needs them, landing on either side. `BENCH_TYPEORM_GC=full` runs the full collection
 * instead, to compare.
 */
const FULL_GC = process.env.BENCH_TYPEORM_GC === 'full';
const collectGarbageBeforeWrite = () => (FULL_GC ? globalThis.gc?.() : globalThis.gc?.({ type: 'minor' }));

const rowsOf = <T>(make: (n: number, label: string) => T): T[] =>
  Array.from({ length: ROWS }, (_, n) => make(n, `row ${n}`));

/** The cases: how rows are built on each side, and how they are written. */
interface Case {
  name: string;
  target: boolean;
  write: (repo: Repository<Row>, rows: Partial<Row>[]) => Promise<unknown>;
  generated: (repo: Repository<Row>) => Partial<Row>[];
  manual: (repo: Repository<Row>) => Partial<Row>[];
}

function cases(ids: IdService): Case[] {
  const insert = (repo: Repository<Row>, rows: Partial<Row>[]) => repo.insert(rows);
  return [
    {
      name: 'entity instances (`repository.create()`), `insert()`',
      target: true,
      write: insert,
      generated: (repo) => rowsOf((n, label) => repo.create({ n, label })),
      manual: (repo) => rowsOf((n, label) => repo.create({ id: ids.next(), n, label })),
    },
    {
      name: 'plain objects, `insert()`',
      // How most code calls insert([...]): V8 makes literals built without `id` pay for adding it.
      target: true,
      write: insert,
      generated: () => rowsOf((n, label) => ({ n, label })),
      manual: () => rowsOf((n, label) => ({ id: ids.next(), n, label })),
    },
  ];
}

/**
 * The median of `values` and a 95 % confidence interval for it, from order statistics (no assumption about the
 * distribution, which a busy machine skews).
 */
function medianWithInterval(values: readonly number[]): { median: number; low: number; high: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const spread = Math.ceil((1.96 * Math.sqrt(n)) / 2);
  const at = (i: number) => sorted[Math.min(n - 1, Math.max(0, i))];
  return { median: median(sorted), low: at(Math.floor(n / 2) - spread), high: at(Math.ceil(n / 2) + spread - 1) };
}

/**
 * Rounds of one generated and one hand-assigned bulk write each, until the median ratio is known to within
 * `precision` (95 % interval) or the time budget runs out.
 */
async function measure(
  testCase: Case,
  {
    generated,
    manual,
    minRounds,
    budgetMs,
    precision,
    log,
  }: { generated: DataSource; manual: DataSource; minRounds: number; budgetMs: number; precision: number; log: Log },
) {
  const sides: Record<Side, { table: string; ds: DataSource; repo: Repository<Row> }> = {
    generated: { table: 'bench_generated_row', ds: generated, repo: generated.getRepository(GeneratedRow) },
    manual: { table: 'bench_manual_row', ds: manual, repo: manual.getRepository(ManualRow) },
  };
  const once = async (name: Side) => {
    const side = sides[name];
    await side.ds.query(`DELETE FROM ${side.table}`);
    collectGarbageBeforeWrite();
    const start = performance.now();
    await testCase.write(side.repo, testCase[name](side.repo));
    return performance.now() - start;
  };
  for (let i = 0; i < 5; i++) for (const name of ['generated', 'manual'] as const) await once(name);
  const times: Record<Side, number[]> = { generated: [], manual: [] };
  const ratios: number[] = [];
  const deadline = performance.now() + budgetMs;
  let interval: ReturnType<typeof medianWithInterval>;
  do {
    const order: Side[] = ratios.length % 2 === 0 ? ['generated', 'manual'] : ['manual', 'generated'];
    const ms: Partial<Record<Side, number>> = {};
    for (const name of order) ms[name] = await once(name);
    times.generated.push(ms.generated!);
    times.manual.push(ms.manual!);
    ratios.push(ms.generated! / ms.manual!);
    interval = medianWithInterval(ratios);
  } while (ratios.length < minRounds || (interval.high - interval.low > 2 * precision && performance.now() < deadline));
  const [check] = await generated.query<{ total: number | string; ids: number | string }[]>(
    'SELECT COUNT(*) AS total, COUNT(DISTINCT id) AS ids FROM bench_generated_row',
  );
  if (Number(check.total) !== ROWS || Number(check.ids) !== ROWS) {
    throw new Error(`expected ${ROWS} rows with distinct IDs, found ${check.total} rows and ${check.ids} IDs`);
  }
  const generatedMs = median(times.generated);
  const manualMs = median(times.manual);
  // Rounds alternate which side goes first; the medians of each order show an order effect if there is one.
  const byOrder = (first: Side) => median(ratios.filter((_, i) => (i % 2 === 0) === (first === 'generated'))) - 1;
  const result = {
    rounds: ratios.length,
    generated: generatedMs,
    manual: manualMs,
    overhead: interval.median - 1,
    low: interval.low - 1,
    high: interval.high - 1,
    mediansOverhead: generatedMs / manualMs - 1,
  };
  log(
    `  ${testCase.name}: ${result.rounds} rounds, by hand ${result.manual.toFixed(1)} ms, generated ` +
      `${result.generated.toFixed(1)} ms, overhead ${formatPercent(result.overhead)} ` +
      `(95 % interval ${formatPercent(result.low)} to ${formatPercent(result.high)}; ratio of the medians ` +
      `${formatPercent(result.mediansOverhead)}; generated first ${formatPercent(byOrder('generated'))}, ` +
      `by hand first ${formatPercent(byOrder('manual'))})`,
  );
  return result;
}

const bench = {
  name: 'typeorm',
  title: 'TypeORM: @GeneratedId() bulk insert',
  async run({
    settings = defaultSettings,
    log = (line) => void process.stderr.write(`${line}\n`),
  }: Partial<BenchContext> = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'snowflake-bench-typeorm-'));
    const file = join(dir, 'bench.db');
    const app = await boot(file);
    const manual = await new DataSource(sqliteOptions(file, [ManualRow])).initialize();
    try {
      // The budget scales with BENCH_REPEATS (3 by default: 60 s for the target case at most).
      const context = { generated: app.get(DataSource), manual, minRounds: 15, precision: 0.01, log };
      const results: ({ testCase: Case } & Awaited<ReturnType<typeof measure>>)[] = [];
      for (const testCase of cases(app.get(IdService))) {
        const budgetMs = settings.repeats * (testCase.target ? 20_000 : 7_000);
        results.push({ testCase, ...(await measure(testCase, { ...context, budgetMs })) });
      }
      const sections = [
        `10,000 rows (id bigint, n int, label varchar) in one call into a SQLite file (better-sqlite3 with ` +
          `\`safeIntegerDriver\`); the timed part builds the rows and writes them, each write after a ${FULL_GC ? 'full' : 'minor'} GC. ` +
          "Overhead two ways: the median of the rounds' paired ratios, with its 95 % interval (rounds continue until " +
          "it is ±1 % or the time budget ends), and the ratio of the two sides' median times. They differ when the " +
          "machine's speed shifts during the run; the target is checked against the larger.",
        markdownTable(
          [
            'rows, write',
            'rounds',
            'IDs by hand (ms)',
            '@GeneratedId() (ms)',
            "overhead (rounds' median)",
            '95 % interval',
            "overhead (medians' ratio)",
            'per row (µs, medians)',
          ],
          results.map((r) => [
            r.testCase.name,
            String(r.rounds),
            r.manual.toFixed(1),
            r.generated.toFixed(1),
            formatPercent(r.overhead),
            `${formatPercent(r.low)} to ${formatPercent(r.high)}`,
            formatPercent(r.mediansOverhead),
            (((r.generated - r.manual) * 1000) / ROWS).toFixed(2),
          ]),
        ),
      ];
      const targets = results
        .filter((r) => r.testCase.target)
        .map((r) => {
          const overhead = Math.max(r.overhead, r.mediansOverhead);
          return {
            name: `@GeneratedId() overhead, ${ROWS.toLocaleString('en-US')} ${r.testCase.name}`,
            measured:
              `${formatPercent(r.overhead)} (95 %: ≤ ${formatPercent(r.high)}); ` +
              `medians' ratio ${formatPercent(r.mediansOverhead)}`,
            goal: `≤ ${formatPercent(TARGET_OVERHEAD)}`,
            pass: overhead <= TARGET_OVERHEAD,
            // An estimate can pass while the interval still reaches past the goal: say so rather than claim it.
            verdict:
              overhead > TARGET_OVERHEAD
                ? 'MISS'
                : r.high <= TARGET_OVERHEAD
                  ? 'PASS'
                  : 'PASS on both estimates; interval reaches past the goal',
          };
        });
      return { sections, targets };
    } finally {
      await manual.destroy();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
} satisfies Bench;

export default bench;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { sections, targets } = await bench.run();
  process.stdout.write(`### ${bench.title}\n\n${sections.join('\n\n')}\n\n`);
  for (const t of targets)
    process.stdout.write(`${t.name}: ${t.measured} (goal ${t.goal}) ${t.pass ? 'PASS' : 'MISS'}\n`);
}
