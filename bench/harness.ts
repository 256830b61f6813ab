/**
 * Measuring helpers shared by the bench modules.
 *
 * Snowflake generators are rate-capped (2^sequence IDs per time unit), so a per-call timer such as mitata's would
 * report the cost of a call, not how many IDs a second one gets. Throughput is therefore measured as IDs issued over a
 * fixed wall-clock window, repeated and reduced to the median.
 */
import { performance } from 'node:perf_hooks';
import { SequenceExhaustedError } from 'nestjs-snowflake';

/** Progress lines, written to stderr. */
export type Log = (line: string) => void;

/** The run's settings, from the environment (see below). */
export type Settings = typeof settings;

/** One row of the targets table that `npm run bench` prints last. */
export interface Target {
  name: string;
  measured: string;
  goal: string;
  pass: boolean;
  /** Shown instead of PASS or MISS when set (a target that could not be measured, for example). */
  verdict?: string;
}

/** What a bench module's `run` returns: markdown sections printed under its title, and its targets. */
export interface BenchResult {
  sections: string[];
  targets: Target[];
}

/** What run.ts hands each bench module. */
export interface BenchContext {
  settings: Settings;
  log: Log;
}

/** A bench module's default export, run by run.ts. */
export interface Bench {
  name: string;
  title: string;
  run(context: BenchContext): Promise<BenchResult> | BenchResult;
}

/** A candidate of a throughput table: `call` issues `perCall` IDs (1 unless a batch). */
export interface ThroughputCandidate {
  name: string;
  call: () => unknown;
  perCall?: number;
}

/** A candidate of a uniqueness check: `take(n)` issues `n` IDs, `key` maps one to a comparable value. */
export interface UniquenessCandidate<T> {
  take: (n: number) => T[];
  key: (id: T) => bigint | string;
}

/** Environment knobs for quick runs; the defaults are the published figures' settings. */
export const settings = {
  windowMs: positiveInt(process.env.BENCH_WINDOW_MS, 2000),
  repeats: positiveInt(process.env.BENCH_REPEATS, 3),
  sampleSize: positiveInt(process.env.BENCH_SAMPLE, 1_000_000),
};

function positiveInt(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return text !== undefined && Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

export function collectGarbage() {
  globalThis.gc?.();
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Builds a timing loop of its own for one candidate. Sharing one loop would make its call site megamorphic once a
 * few candidates ran through it, and every later candidate would be measured without inlining.
 */
type TimingLoop = (
  call: () => unknown,
  inner: number,
  end: number,
  now: () => number,
) => { calls: number; sink: unknown };

function compileLoop(): TimingLoop {
  // A new function object per candidate is the point (see above); its source is this fixed text.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(
    'call',
    'inner',
    'end',
    'now',
    `let calls = 0;
    let sink;
    do {
      for (let i = 0; i < inner; i++) sink = call();
      calls += inner;
    } while (now() < end);
    return { calls, sink };`,
  ) as TimingLoop;
}

/**
 * Counts the IDs a candidate issues in `windowMs` of wall time.
 * `once` runs one window and returns IDs per second.
 */
export function throughputMeter(candidate: Pick<ThroughputCandidate, 'call' | 'perCall'>): {
  once: (windowMs: number) => number;
} {
  const loop = compileLoop();
  const perCall = candidate.perCall ?? 1;
  // Read the clock about every 256 IDs: often enough for a precise window, rarely enough to cost nothing.
  const inner = Math.max(1, Math.round(256 / perCall));
  const now = () => performance.now();
  return {
    once(windowMs: number) {
      const start = performance.now();
      const { calls } = loop(candidate.call, inner, start + windowMs, now);
      const elapsed = performance.now() - start;
      return (calls * perCall * 1000) / elapsed;
    },
  };
}

/**
 * Runs every candidate's window `repeats` times, round-robin so that a slow moment of the machine hits all candidates
 * alike, after one short warm-up window each. Returns the median IDs/s per candidate, in input order.
 */
export function measureThroughput(
  candidates: readonly ThroughputCandidate[],
  { windowMs, repeats, log }: { windowMs: number; repeats: number; log: Log },
): { median: number; rates: number[] }[] {
  const meters = candidates.map((c) => throughputMeter(c));
  meters.forEach((meter, i) => {
    log(`  warm-up ${candidates[i].name}`);
    collectGarbage();
    meter.once(Math.min(300, windowMs));
  });
  const results = candidates.map((): number[] => []);
  for (let round = 0; round < repeats; round++) {
    meters.forEach((meter, i) => {
      collectGarbage();
      const rate = meter.once(windowMs);
      results[i].push(rate);
      log(`  round ${round + 1}/${repeats} ${candidates[i].name}: ${formatInt(rate)} IDs/s`);
    });
  }
  return results.map((rates) => ({ median: median(rates), rates }));
}

/**
 * Calls `fn` again when it throws {@link SequenceExhaustedError}, counting each time in `retries.count`, so that a
 * bounded wait that gave up (a process descheduled in the middle of it, on a busy machine) shows in the table instead
 * of ending the run. Compiled for each candidate, like the timing loop, so that the call to `fn` stays monomorphic.
 */
export function retryingExhausted<F extends (arg: never) => unknown>(fn: F, retries: { count: number }): F {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- compiled per candidate, as above
  return new Function(
    'fn',
    'retries',
    'SequenceExhaustedError',
    `return (arg) => {
      for (;;) {
        try {
          return fn(arg);
        } catch (error) {
          if (!(error instanceof SequenceExhaustedError)) throw error;
          retries.count++;
        }
      }
    };`,
  )(fn, retries, SequenceExhaustedError) as F;
}

/**
 * Takes `n` consecutive IDs and reports how many repeat an earlier one and whether they strictly increase in the
 * order issued. `key` maps an ID to a bigint (compared numerically) or a string (compared as text).
 */
export function uniqueness<T>(
  candidate: UniquenessCandidate<T>,
  n: number,
): { duplicates: number; increasing: boolean } {
  collectGarbage();
  const keys = candidate.take(n).map(candidate.key);
  let increasing = true;
  for (let i = 1; i < keys.length && increasing; i++) increasing = keys[i - 1] < keys[i];
  let duplicates: number;
  if (typeof keys[0] === 'bigint') {
    const sorted = BigUint64Array.from(keys as bigint[]).sort();
    duplicates = 0;
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) duplicates++;
  } else {
    duplicates = keys.length - new Set(keys).size;
  }
  return { duplicates, increasing };
}

/** Calls `next` `n` times into an array: the default `take` of a candidate that issues one ID per call. */
export function takeEach<T>(next: () => T, n: number): T[] {
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) out[i] = next();
  return out;
}

export function formatInt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function formatPercent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)} %`;
}

const ALIGN = { left: ':--', right: '--:', center: ':-:' };

/**
 * A markdown table from a header row and data rows. `align` gives each column's alignment (`left`, `right` or
 * `center`); by default the first column is left-aligned and the others, figures, right-aligned.
 */
export type Align = keyof typeof ALIGN;

export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly (string | number)[])[],
  align: readonly Align[] = header.map((_, i) => (i === 0 ? 'left' : 'right')),
): string {
  const rule = align.map((a) => ALIGN[a]);
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
