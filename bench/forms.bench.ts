/**
 * Text forms: how many IDs per second the base32 and base62 forms and public IDs write and read, against `next()`
 * in the same run, so that the ratios hold whatever the machine's speed.
 *
 * Each form writes 4,096 consecutive IDs of the `twitter` layout in turn (and reads their texts back), so that no
 * call sees the same input twice in a row. `next()` is capped by the layout at 4,096,000 IDs/s.
 */
import { SnowflakeGenerator, base32Form, base62Form, publicIdForm, resolveLayout } from 'nestjs-snowflake';
import { type Bench, formatInt, markdownTable, measureThroughput, retryingExhausted } from './harness.js';

const KEY = 'a-benchmark-key-0123456789abcdef';
const COUNT = 4096;
/** Public IDs written, and read, per second: at most a microsecond each. */
const TARGET_PUBLIC_PER_SECOND = 1_000_000;

function candidates() {
  const layout = resolveLayout('twitter');
  const generator = new SnowflakeGenerator({ layout, datacenterId: 1, workerId: 1 });
  const retries = { count: 0 };
  const next = retryingExhausted(() => generator.next(), retries);
  const ids = generator.nextBatch(COUNT);
  const forms: [string, { format(id: bigint): string; parse(text: string): bigint }][] = [
    ['base32', base32Form({ bits: layout.totalBits })],
    ['base62', base62Form({ bits: layout.totalBits })],
    ['public ID, base32', publicIdForm({ keys: [KEY], layout })],
    ['public ID, base62', publicIdForm({ keys: [KEY], layout, alphabet: 'base62' })],
  ];
  const list: { name: string; call: () => unknown; what: string }[] = [{ name: '`next()`', call: next, what: 'issue' }];
  for (const [name, form] of forms) {
    const texts = ids.map((id) => form.format(id));
    let w = 0;
    let r = 0;
    list.push({ name: `${name} \`format()\``, call: () => form.format(ids[w++ & (COUNT - 1)]), what: 'write' });
    list.push({ name: `${name} \`parse()\``, call: () => form.parse(texts[r++ & (COUNT - 1)]), what: 'read' });
  }
  return { list, example: forms.map(([name, form]) => [name, form.format(ids[0])]) };
}

export default {
  name: 'forms',
  title: 'String forms and public IDs',

  run({ settings, log }) {
    const { windowMs, repeats } = settings;
    const { list, example } = candidates();
    log(`throughput: ${repeats} × ${windowMs} ms per call`);
    const rates = measureThroughput(list, { windowMs, repeats, log }).map((r) => r.median);
    const next = rates[0];
    const table = markdownTable(
      ['call', 'IDs/s', 'µs per ID', 'of `next()`'],
      list.map((candidate, i) => [
        candidate.name,
        formatInt(rates[i]),
        (1e6 / rates[i]).toFixed(3),
        i === 0 ? '1×' : `${(rates[i] / next).toFixed(rates[i] >= next ? 2 : 3)}×`,
      ]),
      ['left', 'right', 'right', 'right'],
    );
    const publicWrite = rates[list.findIndex((c) => c.name === 'public ID, base32 `format()`')];
    const publicRead = rates[list.findIndex((c) => c.name === 'public ID, base32 `parse()`')];
    return {
      sections: [
        `IDs per second: median of ${repeats} windows of ${windowMs} ms, round-robin in one process, each form ` +
          `writing ${formatInt(COUNT)} consecutive \`twitter\` IDs in turn and reading their texts back. ` +
          '`next()` is capped by the layout at 4,096,000 IDs/s. A public ID (version 3) costs eight Feistel rounds of ' +
          'SipHash-1-3 in JavaScript, with no call into native code (version 2, still read, cost ten AES-128 ' +
          'calls through `node:crypto`). Texts of the first ID: ' +
          example.map(([name, text]) => `${name} \`${text}\``).join(', ') +
          '.',
        table,
      ],
      targets: [
        {
          name: 'public IDs written per second (base32, `twitter`)',
          measured: `${formatInt(publicWrite)} (${(publicWrite / next).toFixed(3)}× \`next()\`)`,
          goal: `≥ ${formatInt(TARGET_PUBLIC_PER_SECOND)}`,
          pass: publicWrite >= TARGET_PUBLIC_PER_SECOND,
        },
        {
          name: 'public IDs read per second (base32, `twitter`)',
          measured: `${formatInt(publicRead)} (${(publicRead / next).toFixed(3)}× \`next()\`)`,
          goal: `≥ ${formatInt(TARGET_PUBLIC_PER_SECOND)}`,
          pass: publicRead >= TARGET_PUBLIC_PER_SECOND,
        },
      ],
    };
  },
} satisfies Bench;
