/**
 * Stalls: what each call does to the event loop when the generator is saturated. A producer issues IDs as fast as
 * it can, 64 per macrotask (a request handler that needs a few dozen IDs), on `js-safe`, whose cap (512 IDs per
 * 10 ms unit) it reaches at once; meanwhile `perf_hooks.monitorEventLoopDelay` records how late the loop runs a timer
 * that wants to run every millisecond, which is what every other request of the process waits through.
 *
 * - `next()` spins for the next time unit when the sequence is spent: up to one unit (10 ms here).
 * - `nextBatch(64)` does the same once per batch; its waits add up to `maxSyncWaitMs` (10 ms) at most.
 * - `nextAsync()` never spins: it sleeps on a timer until the next unit and lets the loop run meanwhile.
 * - The baseline issues nothing: the same loop of macrotasks, to show what the machine itself adds.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { SnowflakeGenerator, resolveLayout } from 'nestjs-snowflake';
import { type Bench, collectGarbage, formatInt, markdownTable, median } from './harness.js';

interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  rate: number;
}

const PER_TASK = 64;

/** Runs `task` back to back in macrotasks for `windowMs`, recording the loop's delay; returns it and the IDs made. */
async function underLoad(task: () => number | Promise<number>, windowMs: number): Promise<LoopDelay> {
  collectGarbage();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let issued = 0;
  const end = performance.now() + windowMs;
  histogram.enable();
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const step = () => {
      if (performance.now() >= end) return resolve();
      Promise.resolve(task())
        .then((n) => {
          issued += n;
          setImmediate(step);
        })
        .catch(reject);
    };
    setImmediate(step);
  });
  histogram.disable();
  const elapsed = performance.now() - started;
  const ms = (ns: number) => ns / 1e6;
  return {
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    rate: (issued * 1000) / elapsed,
  };
}

function modes() {
  const layout = resolveLayout('js-safe');
  const make = () => new SnowflakeGenerator({ layout, workerId: 1 });
  const forNext = make();
  const forBatch = make();
  const forAsync = make();
  return {
    layout,
    list: [
      { name: 'no IDs (the same macrotasks, doing nothing)', task: () => 0 },
      {
        name: `\`next()\` × ${PER_TASK}`,
        task: () => {
          for (let i = 0; i < PER_TASK; i++) forNext.next();
          return PER_TASK;
        },
      },
      { name: `\`nextBatch(${PER_TASK})\``, task: () => forBatch.nextBatch(PER_TASK).length },
      {
        name: `\`nextAsync()\` × ${PER_TASK}`,
        task: async () => {
          for (let i = 0; i < PER_TASK; i++) await forAsync.nextAsync();
          return PER_TASK;
        },
      },
    ],
  };
}

export default {
  name: 'stalls',
  title: 'Stalls: event-loop delay under saturation',

  async run({ settings, log }) {
    const { windowMs, repeats } = settings;
    const { layout, list } = modes();
    const cap = 2 ** layout.sequenceBits * (1000 / layout.timeUnitMs);
    const results = list.map((): LoopDelay[] => []);
    for (let round = 0; round < repeats; round++) {
      for (const [i, mode] of list.entries()) {
        const result = await underLoad(mode.task, windowMs);
        results[i].push(result);
        log(
          `  round ${round + 1}/${repeats} ${mode.name}: p99 ${result.p99.toFixed(2)} ms, max ${result.max.toFixed(2)} ms`,
        );
      }
    }
    const summary = results.map((rounds) => ({
      p50: median(rounds.map((r) => r.p50)),
      p99: median(rounds.map((r) => r.p99)),
      max: Math.max(...rounds.map((r) => r.max)),
      rate: median(rounds.map((r) => r.rate)),
    }));
    const [base, next, batch, async_] = summary;
    const unit = layout.timeUnitMs;
    const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
    const table = markdownTable(
      ['producer (js-safe, saturated)', 'IDs/s', 'of cap', 'loop delay p50', 'p99', 'max'],
      list.map((mode, i) => [
        mode.name,
        i === 0 ? '' : formatInt(summary[i].rate),
        i === 0 ? '' : `${((summary[i].rate / cap) * 100).toFixed(1)} %`,
        fmt(summary[i].p50),
        fmt(summary[i].p99),
        fmt(summary[i].max),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right'],
    );
    return {
      sections: [
        `A producer issues IDs back to back, ${PER_TASK} per macrotask, on \`js-safe\` (cap ${formatInt(cap)} IDs/s, ` +
          `${unit} ms units), for ${repeats} windows of ${windowMs} ms each; \`monitorEventLoopDelay\` (1 ms ` +
          'resolution) records how late the loop runs a timer meanwhile: p50 and p99 are medians over the windows, ' +
          'max the largest. `next()` and `nextBatch()` spin for the next unit when the sequence is spent; ' +
          '`nextAsync()` sleeps on a timer instead.',
        table,
      ],
      targets: [
        {
          name: `\`next()\` saturated: loop delay p99 over the baseline's, at most one time unit (${unit} ms)`,
          measured: `${fmt(next.p99)} (baseline ${fmt(base.p99)})`,
          goal: `≤ ${fmt(base.p99 + unit)}`,
          pass: next.p99 <= base.p99 + unit,
        },
        {
          name: `\`nextBatch(${PER_TASK})\` saturated: loop delay p99, at most one time unit over the baseline's`,
          measured: fmt(batch.p99),
          goal: `≤ ${fmt(base.p99 + unit)}`,
          pass: batch.p99 <= base.p99 + unit,
        },
        {
          name: '`nextAsync()` saturated: loop delay p99, at most 1 ms over the baseline',
          measured: fmt(async_.p99),
          goal: `≤ ${fmt(base.p99 + 1)}`,
          pass: async_.p99 <= base.p99 + 1,
        },
      ],
    };
  },
} satisfies Bench;
