/**
 * Shard keys and sequence starts: what `next({ shardKey })` costs against `next()`, and what `sequenceStart` costs
 * `next()`, in one run.
 *
 * - Cost of a call (mitata, alternating rounds), on a layout whose cap does not bind, so the time is the call's own:
 *   `Date.now()`, `next()` on the plain wide layout (the figure ids.bench.js holds to its target), `next()` and
 *   `next({ shardKey })` on the same layout with a shard field, and `next()` with each sequence start.
 * - Peak: IDs per second at full speed on `twitter` with each sequence start, against the cap, since an offset start
 *   leaves fewer IDs in a time unit.
 */
import { performance } from 'node:perf_hooks';
import { do_not_optimize, measure } from 'mitata';
import { SnowflakeGenerator, resolveLayout, type Layout, type SequenceStart } from 'nestjs-snowflake';
import {
  type Bench,
  type Log,
  collectGarbage,
  formatInt,
  formatPercent,
  markdownTable,
  measureThroughput,
  median,
  retryingExhausted,
} from './harness.js';
import { TARGET_NEXT } from './ids.bench.js';

/** The cost `next()` may have against `Date.now()` on the wide layout (as in ids.bench.js). */
const TARGET_WIDE_RATIO = 2.5;

const capOf = (layout: Layout) => 2 ** layout.sequenceBits * (1000 / layout.timeUnitMs);

async function nsPerCall(fn: () => unknown): Promise<number> {
  collectGarbage();
  return (await measure(fn)).p50;
}

/** Median ns per call of each candidate over `rounds` rounds, the order rotated each round. */
async function costs(candidates: readonly { name: string; call: () => unknown }[], rounds: number, log: Log) {
  const times = candidates.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < candidates.length; k++) {
      const i = (k + round) % candidates.length;
      times[i].push(await nsPerCall(candidates[i].call));
    }
    log(
      `  round ${round + 1}/${rounds}: ${candidates.map((c, i) => `${c.name} ${times[i].at(-1)!.toFixed(1)} ns`).join(', ')}`,
    );
  }
  return times.map((list) => median(list));
}

/**
 * Runs `next` flat out for `windowMs` and counts, for every time unit the generator used to its last sequence, the IDs
 * it issued in it: what a unit holds at peak. Units cut short because the process was descheduled do not end at the
 * last sequence and are left out, so the figure holds on a busy machine, where IDs per second do not.
 */
function idsPerFullUnit(next: () => bigint, layout: Layout, windowMs: number): { full: number; mean: number } {
  const tsShift = BigInt(layout.timestampShift);
  const seqShift = BigInt(layout.sequenceShift);
  const seqMask = BigInt(layout.maxSequence);
  const end = performance.now() + windowMs;
  let unit = -1n;
  let first = 0;
  let last = -1;
  let full = 0;
  let held = 0;
  for (let i = 0; ; i++) {
    const id = next();
    const t = id >> tsShift;
    const seq = Number((id >> seqShift) & seqMask);
    if (t !== unit) {
      if (last === layout.maxSequence) {
        full++;
        held += last - first + 1;
      }
      unit = t;
      first = seq;
    }
    last = seq;
    if ((i & 255) === 0 && performance.now() > end) break;
  }
  return { full, mean: full === 0 ? 0 : held / full };
}

export default {
  name: 'shards',
  title: 'Shard keys and sequence starts',

  async run({ settings, log }) {
    const { windowMs, repeats } = settings;
    // 41 timestamp bits leave 22: the plain wide layout of ids.bench.js, and the same with 4 of its sequence bits
    // turned into a shard field.
    const wide = resolveLayout({ preset: 'twitter', datacenterBits: 0, workerBits: 2, sequenceBits: 20 });
    const wideSharded = resolveLayout({
      preset: 'twitter',
      datacenterBits: 0,
      workerBits: 2,
      sequenceBits: 16,
      shardBits: 4,
    });
    const plain = new SnowflakeGenerator({ layout: wide, workerId: 1 });
    const sharded = new SnowflakeGenerator({ layout: wideSharded, workerId: 1 });
    const keyed = new SnowflakeGenerator({ layout: wideSharded, workerId: 2 });
    const keyedBig = new SnowflakeGenerator({ layout: wideSharded, workerId: 3 });
    const random = new SnowflakeGenerator({ layout: wide, workerId: 2, sequenceStart: 'random' });
    const rotating = new SnowflakeGenerator({ layout: wide, workerId: 3, sequenceStart: 'rotating' });
    // A key per call, as an app sharding by user would pass: a string of 12 characters, and a bigint.
    const keys = Array.from({ length: 1024 }, (_, i) => `user-${1_000_000 + i * 7919}`);
    const bigKeys = keys.map((_, i) => 118_396_408_435_834_880n + BigInt(i));
    let k = 0;
    let kb = 0;
    const wideLabel = (l: Layout) =>
      `${l.timestampBits}/${l.datacenterBits}/${l.workerBits}/${l.sequenceBits}${l.shardBits ? `/${l.shardBits}` : ''}`;
    const candidates = [
      { name: '`Date.now()`', call: () => do_not_optimize(Date.now()) },
      { name: `\`next()\`, ${wideLabel(wide)} bits`, call: () => do_not_optimize(plain.next()) },
      {
        name: `\`next()\`, ${wideLabel(wideSharded)} bits (with a shard field)`,
        call: () => do_not_optimize(sharded.next()),
      },
      {
        name: `\`next({ shardKey })\`, ${wideLabel(wideSharded)} bits, a 12-character string key`,
        call: () => do_not_optimize(keyed.next({ shardKey: keys[k++ & 1023] })),
      },
      {
        name: `\`next({ shardKey })\`, ${wideLabel(wideSharded)} bits, a bigint key`,
        call: () => do_not_optimize(keyedBig.next({ shardKey: bigKeys[kb++ & 1023] })),
      },
      {
        name: `\`next()\`, ${wideLabel(wide)} bits, \`sequenceStart: 'random'\``,
        call: () => do_not_optimize(random.next()),
      },
      {
        name: `\`next()\`, ${wideLabel(wide)} bits, \`sequenceStart: 'rotating'\``,
        call: () => do_not_optimize(rotating.next()),
      },
    ];
    const rounds = 2 * repeats;
    log(`cost of a call: ${rounds} rounds (mitata)`);
    const ns = await costs(candidates, rounds, log);
    const costTable = markdownTable(
      ['call', 'ns per call (median of rounds)', 'against `Date.now()`', 'against plain `next()`'],
      candidates.map((c, i) => [
        c.name,
        ns[i].toFixed(1),
        `${(ns[i] / ns[0]).toFixed(2)}×`,
        i === 0 ? '' : `${(ns[i] / ns[1]).toFixed(2)}×`,
      ]),
    );

    const twitter = resolveLayout('twitter');
    const starts: SequenceStart[] = ['zero', 'random', 'rotating'];
    const retries = starts.map(() => ({ count: 0 }));
    const peakCandidates: { name: string; call: () => bigint; perUnit: number; layout?: Layout }[] = starts.map(
      (sequenceStart, i) => {
        const generator = new SnowflakeGenerator({ layout: twitter, workerId: 1, sequenceStart });
        return {
          name: `\`next()\`, \`twitter\`, \`sequenceStart: '${sequenceStart}'\``,
          call: retryingExhausted(() => generator.next(), retries[i]),
          perUnit: generator.perUnit,
        };
      },
    );
    const shardedPreset = resolveLayout('sharded');
    const presetPlain = new SnowflakeGenerator({ layout: shardedPreset, workerId: 1 });
    const presetKeyed = new SnowflakeGenerator({ layout: shardedPreset, workerId: 2 });
    let kp = 0;
    peakCandidates.push(
      {
        name: "`next()`, `'sharded'`",
        call: () => presetPlain.next(),
        perUnit: presetPlain.perUnit,
        layout: shardedPreset,
      },
      {
        name: "`next({ shardKey })`, `'sharded'`",
        call: () => presetKeyed.next({ shardKey: keys[kp++ & 1023] }),
        perUnit: presetKeyed.perUnit,
        layout: shardedPreset,
      },
    );
    log(`peak: ${repeats} × ${windowMs} ms per generator`);
    const rates = measureThroughput(peakCandidates, { windowMs, repeats, log });
    log(`IDs per fully used unit: ${repeats} × ${windowMs} ms per generator`);
    const units = peakCandidates.map((): { full: number; mean: number }[] => []);
    for (let round = 0; round < repeats; round++) {
      peakCandidates.forEach((c, i) => {
        collectGarbage();
        units[i].push(idsPerFullUnit(c.call, c.layout ?? twitter, windowMs));
        log(`  round ${round + 1}/${repeats} ${c.name}: ${units[i].at(-1)!.mean.toFixed(1)} IDs per full unit`);
      });
    }
    const perFull = units.map((list) => median(list.map((u) => u.mean)));
    const fullCounts = units.map((list) => list.reduce((sum, u) => sum + u.full, 0));
    const peakTable = markdownTable(
      [
        'generator',
        'IDs/s',
        'cap (IDs/s)',
        'of cap',
        'IDs per fully used unit',
        'units counted',
        'IDs a unit holds at least',
      ],
      peakCandidates.map((c, i) => {
        const cap = capOf(c.layout ?? twitter);
        return [
          c.name,
          formatInt(rates[i].median),
          formatInt(cap),
          formatPercent(rates[i].median / cap),
          perFull[i].toFixed(1),
          formatInt(fullCounts[i]),
          formatInt(c.perUnit),
        ];
      }),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
    );

    const nextRatio = ns[1] / ns[0];
    const zeroShare = rates[0].median / capOf(twitter);
    const targets = [
      {
        name: '`next()` on the wide layout, cost against `Date.now()` (shards bench)',
        measured: `${nextRatio.toFixed(2)}×`,
        goal: `≤ ${TARGET_WIDE_RATIO.toFixed(2)}×`,
        pass: nextRatio <= TARGET_WIDE_RATIO,
      },
      {
        name: "`next()` on `twitter`, `sequenceStart: 'zero'`, share of the cap (shards bench)",
        measured: formatPercent(zeroShare),
        goal: `≥ ${formatPercent(TARGET_NEXT)}`,
        pass: zeroShare >= TARGET_NEXT,
      },
      {
        name: '`next({ shardKey })` (string key) against `next()`, same layout',
        measured: `${(ns[3] / ns[2]).toFixed(2)}×, +${(ns[3] - ns[2]).toFixed(1)} ns`,
        goal: 'n/a',
        verdict: 'report',
        pass: true,
      },
      {
        name: "`next()` with `sequenceStart: 'random'`: IDs per fully used unit against `'zero'` on `twitter`",
        measured: formatPercent(perFull[1] / perFull[0]),
        goal: `≥ ${formatPercent(peakCandidates[1].perUnit / 4096)} (the least a unit holds)`,
        pass: perFull[1] / perFull[0] >= peakCandidates[1].perUnit / 4096,
      },
    ];

    return {
      sections: [
        `Cost of one call, timed by mitata in ${rounds} rounds, the order rotated each round, on layouts whose cap ` +
          `does not bind (${formatInt(capOf(wide))} and ${formatInt(capOf(wideSharded))} IDs/s). A shard key is ` +
          'hashed on every call (FNV-1a over its UTF-8 bytes or decimal digits); a sequence start draws an offset ' +
          'once per time unit.',
        costTable,
        `Peak: IDs per second, median of ${repeats} windows of ${windowMs} ms, round-robin; and the IDs issued in ` +
          "each time unit the generator used to its last sequence (the median of the windows' means), which a busy " +
          'machine does not distort. An offset start leaves `2^sequence - k` IDs in a unit that starts at `k`, at ' +
          "least half: `random` averages three quarters of the cap; `rotating` as much over a cycle. `'sharded'` is " +
          'capped at 1,024,000 IDs/s by its 10 sequence bits, with or without a key.',
        peakTable,
      ],
      targets,
    };
  },
} satisfies Bench;
