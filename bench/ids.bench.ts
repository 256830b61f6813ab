/**
 * ID generation: this library's generator against the generators users pick instead.
 *
 * - Throughput: IDs per second over fixed wall-clock windows (median), and the share of the layout's cap reached.
 * - Uniqueness: duplicates among consecutive IDs, and whether they strictly increase in the order issued.
 * - Cost: `next()` on a layout whose cap does not bind, against a bare `Date.now()`, both timed by mitata.
 */
import { randomUUID } from 'node:crypto';
import { Snowflake as SapphireSnowflake } from '@sapphire/snowflake';
import FlakeId from 'flake-idgen';
import { do_not_optimize, measure } from 'mitata';
import nodejsSnowflake from 'nodejs-snowflake';
import snowflakeUuid from 'snowflake-uuid';
import { v7 as uuidv7 } from 'uuid';
import { SnowflakeGenerator, resolveLayout, type Layout } from 'nestjs-snowflake';
import {
  type Bench,
  collectGarbage,
  formatInt,
  formatPercent,
  markdownTable,
  measureThroughput,
  median,
  retryingExhausted,
  type Log,
  takeEach,
  uniqueness,
} from './harness.js';

/** The share of the `twitter` cap `next()` must reach (also the goal of a leased `next()`, in lease.bench.js). */
export const TARGET_NEXT = 0.97;
const TARGET_NEXT_STRING = 0.9;
const TARGET_WIDE_RATIO = 2.5;
const BATCH = 1000;

/** IDs per second a layout allows one worker: 2^sequence per time unit. */
const capOf = (layout: Layout) => 2 ** layout.sequenceBits * (1000 / layout.timeUnitMs);

/** A generator in the tables: how to call it, how to compare its IDs, and what it may reach. */
interface IdCandidate {
  name: string;
  call: () => unknown;
  perCall?: number;
  retries?: { count: number };
  take?: (n: number) => unknown[];
  key: (id: unknown) => bigint | string;
  cap: number | undefined;
  notes: string;
}

function candidates(): IdCandidate[] {
  const twitter = resolveLayout({ preset: 'twitter' });
  const twitterCap = capOf(twitter);
  const ours = () => new SnowflakeGenerator({ layout: twitter, datacenterId: 1, workerId: 1 });

  const forNext = ours();
  const forString = ours();
  const forBatch = ours();
  const retries = [{ count: 0 }, { count: 0 }, { count: 0 }];
  const next = retryingExhausted(() => forNext.next(), retries[0]);
  const nextString = retryingExhausted(() => forString.nextString(), retries[1]);
  const nextBatch = retryingExhausted((n: number) => forBatch.nextBatch(n), retries[2]);
  const sapphire = new SapphireSnowflake(twitter.epoch);
  const flake = new FlakeId({ datacenter: 1, worker: 1, epoch: twitter.epoch });
  const flakeNext = () => {
    // flake-idgen throws once a millisecond's 4,096 IDs are used; a synchronous caller can only try again.
    for (;;) {
      try {
        return flake.next();
      } catch {
        continue;
      }
    }
  };
  const wasm = new nodejsSnowflake.Snowflake({ custom_epoch: twitter.epoch, instance_id: 1 });
  const worker = new snowflakeUuid.Worker(1, 1, { epoch: twitter.epoch });

  const bigint = (id: unknown) => id as bigint;
  return [
    {
      name: 'nestjs-snowflake `next()`',
      call: next,
      retries: retries[0],
      key: bigint,
      cap: twitterCap,
      notes: 'bigint, `twitter` layout',
    },
    {
      name: 'nestjs-snowflake `nextString()`',
      call: nextString,
      retries: retries[1],
      key: (id) => BigInt(id as string),
      cap: twitterCap,
      notes: 'decimal string',
    },
    {
      name: `nestjs-snowflake \`nextBatch(${BATCH})\``,
      call: () => nextBatch(BATCH),
      perCall: BATCH,
      retries: retries[2],
      take: (n) => {
        const out: bigint[] = [];
        while (out.length < n) out.push(...nextBatch(Math.min(BATCH, n - out.length)));
        return out;
      },
      key: bigint,
      cap: twitterCap,
      notes: `per ID, ${BATCH} per call`,
    },
    {
      name: '@sapphire/snowflake `generate()`',
      call: () => sapphire.generate(),
      key: bigint,
      cap: twitterCap,
      notes: 'wraps the 12-bit increment without waiting for the next ms',
    },
    {
      name: 'flake-idgen `next()`',
      call: flakeNext,
      key: (buffer) => (buffer as Buffer).readBigUInt64BE(0),
      cap: twitterCap,
      notes: '8-byte Buffer; throws on overflow, retried',
    },
    {
      name: 'nodejs-snowflake `getUniqueID()`',
      call: () => wasm.getUniqueID(),
      key: bigint,
      cap: 1_024_000,
      notes: 'WASM; 10 sequence bits',
    },
    {
      name: 'snowflake-uuid `nextId()`',
      call: () => worker.nextId(),
      key: bigint,
      cap: twitterCap,
      notes: 'bigint arithmetic throughout',
    },
    {
      name: 'uuid `v7()`',
      call: () => uuidv7(),
      key: String,
      cap: undefined,
      notes: '128-bit string',
    },
    {
      name: '`crypto.randomUUID()`',
      call: () => randomUUID(),
      key: String,
      cap: undefined,
      notes: '128-bit string, random order',
    },
  ];
}

/** mitata's median time per call, in nanoseconds. */
async function nsPerCall(fn: () => unknown): Promise<number> {
  collectGarbage();
  const stats = await measure(fn);
  return stats.p50;
}

async function wideCost(repeats: number, log: Log) {
  const layout = resolveLayout({ preset: 'twitter', datacenterBits: 0, workerBits: 2, sequenceBits: 20 });
  const generator = new SnowflakeGenerator({ layout, workerId: 1 });
  const dateNow = () => do_not_optimize(Date.now());
  const next = () => do_not_optimize(generator.next());
  const rounds: { nowNs: number; nextNs: number; ratio: number }[] = [];
  for (let round = 0; round < repeats; round++) {
    // Alternating which goes first, so that a drift in the machine's state within a round favours neither.
    const nowFirst = round % 2 === 0;
    const first = await nsPerCall(nowFirst ? dateNow : next);
    const second = await nsPerCall(nowFirst ? next : dateNow);
    const [nowNs, nextNs] = nowFirst ? [first, second] : [second, first];
    rounds.push({ nowNs, nextNs, ratio: nextNs / nowNs });
    log(`  round ${round + 1}/${repeats}: Date.now() ${nowNs.toFixed(1)} ns, next() ${nextNs.toFixed(1)} ns`);
  }
  const nowNs = median(rounds.map((r) => r.nowNs));
  const nextNs = median(rounds.map((r) => r.nextNs));
  const ratios = rounds.map((r) => r.ratio);
  return {
    layout,
    nowNs,
    nextNs,
    // Two estimates that differ when the machine's speed shifts between rounds: each round's own ratio (robust to
    // the shift) and the ratio of the two medians. The target is checked against the larger.
    pairedRatio: median(ratios),
    mediansRatio: nextNs / nowNs,
    minRatio: Math.min(...ratios),
    maxRatio: Math.max(...ratios),
  };
}

export default {
  name: 'ids',
  title: 'ID generation',

  async run({ settings, log }) {
    const { windowMs, repeats, sampleSize } = settings;
    const list = candidates();

    log(`throughput: ${repeats} × ${windowMs} ms per generator`);
    const rates = measureThroughput(list, { windowMs, repeats, log });

    log(`uniqueness: ${formatInt(sampleSize)} consecutive IDs per generator`);
    const checks = list.map((candidate) => {
      const take = candidate.take ?? ((n: number) => takeEach(candidate.call, n));
      const result = uniqueness({ take, key: candidate.key }, sampleSize);
      log(`  ${candidate.name}: ${result.duplicates} duplicates`);
      return result;
    });

    log('cost of next() on a wide layout against Date.now() (mitata)');
    const wideRounds = 2 * repeats;
    const wide = await wideCost(wideRounds, log);

    const rows = list.map((candidate, i) => {
      const rate = rates[i].median;
      return [
        candidate.name,
        formatInt(rate),
        candidate.cap === undefined ? 'n/a' : formatInt(candidate.cap),
        candidate.cap === undefined ? 'n/a' : formatPercent(rate / candidate.cap),
        formatInt(checks[i].duplicates),
        checks[i].increasing ? 'yes' : 'no',
        candidate.retries?.count
          ? `${candidate.notes}; SequenceExhaustedError thrown ${formatInt(candidate.retries.count)}×, retried`
          : candidate.notes,
      ];
    });
    const throughputTable = markdownTable(
      [
        'generator',
        'IDs/s',
        'cap (IDs/s)',
        'of cap',
        `duplicates in ${formatInt(sampleSize)}`,
        'strictly increasing',
        'notes',
      ],
      rows,
      ['left', 'right', 'right', 'right', 'right', 'center', 'left'],
    );

    const w = wide.layout;
    const times = (x: number) => `${x.toFixed(2)}×`;
    const costTable = markdownTable(
      ['call', 'ns per call (median)', 'ratio of the medians', "rounds' ratios: median (range)"],
      [
        ['`Date.now()`', wide.nowNs.toFixed(1), '1.00×', '1.00×'],
        [
          `\`next()\`, ${w.timestampBits}/${w.datacenterBits}/${w.workerBits}/${w.sequenceBits} bits`,
          wide.nextNs.toFixed(1),
          times(wide.mediansRatio),
          `${times(wide.pairedRatio)} (${times(wide.minRatio)} to ${times(wide.maxRatio)})`,
        ],
      ],
    );
    const wideRatio = Math.max(wide.mediansRatio, wide.pairedRatio);

    const rateOf = (i: number) => rates[i].median / list[i].cap!;
    const oursClean = [0, 1, 2].every((i) => checks[i].duplicates === 0 && checks[i].increasing);
    const targets = [
      {
        name: '`next()` on `twitter`, share of the cap',
        measured: formatPercent(rateOf(0)),
        goal: `≥ ${formatPercent(TARGET_NEXT)}`,
        pass: rateOf(0) >= TARGET_NEXT,
      },
      {
        name: '`nextString()` on `twitter`, share of the cap',
        measured: formatPercent(rateOf(1)),
        goal: `≥ ${formatPercent(TARGET_NEXT_STRING)}`,
        pass: rateOf(1) >= TARGET_NEXT_STRING,
      },
      {
        name: '`next()` on the wide layout, cost against `Date.now()`',
        measured: `${wideRatio.toFixed(2)}× (the larger estimate)`,
        goal: `≤ ${TARGET_WIDE_RATIO.toFixed(2)}×`,
        pass: wideRatio <= TARGET_WIDE_RATIO,
      },
      {
        name: 'nestjs-snowflake: no duplicate, strictly increasing',
        measured: oursClean ? 'yes' : 'no',
        goal: 'yes',
        pass: oursClean,
      },
    ];

    return {
      sections: [
        `IDs per second: median of ${repeats} windows of ${windowMs} ms, one generator at a time, in one process. ` +
          'The cap is what the layout allows one worker (2^sequence IDs per ms); no correct generator exceeds it.',
        throughputTable,
        `Cost of one call, timed by mitata in ${wideRounds} rounds of one run each, alternating which goes first, ` +
          `on a layout whose cap does not bind (${formatInt(capOf(w))} IDs/s). The ratio is given two ways, which ` +
          "differ when the machine's speed shifts between rounds; the target is checked against the larger:",
        costTable,
      ],
      targets,
    };
  },
} satisfies Bench;
