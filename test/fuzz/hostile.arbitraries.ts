/**
 * Generators of hostile input for the readers of IDs, dates and options: what a client, a pasted argument or a parsed
 * configuration file may hold. Each one mixes near misses of valid input with values no parser expects.
 */
import fc from 'fast-check';

/** Characters that look like nothing, or like digits, and are neither to an ASCII parser. */
export const TRAPS = [
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\u200b',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\0',
  '\ud800',
  '\udfff',
  '+',
  '-',
  '.',
  ',',
  '_',
  'e',
  'E',
  'n',
  'x',
  '0x',
  '0b',
  '0o',
  '\u0660',
  '\u0661',
  '\u0669',
  '\u06f1',
  '\u0967',
  '\uff11',
  '\ud835\udfd9',
  '٣',
  'Infinity',
  'NaN',
];

/** 1 MB and 100 KB texts, built once: the linear-time checks compare one against the other. */
export const BIG_TEXTS = (() => {
  const of = (size: number) => ({
    digits: '1'.repeat(size),
    zeros: `${'0'.repeat(size - 1)}1`,
    trailing: `${'1'.repeat(size - 1)}x`,
    spaces: ' '.repeat(size),
    letters: 'a'.repeat(size),
    surrogates: '\ud800'.repeat(size),
  });
  return { mb: of(1_000_000), kb100: of(100_000) };
})();

/**
 * A value made when a property uses it, printed by its label: fast-check prints counterexamples, and a revoked Proxy
 * throws when printed, a megabyte prints whole.
 */
export class Deferred {
  constructor(
    readonly label: string,
    readonly make: () => unknown,
  ) {}

  [fc.toStringMethod](): string {
    return this.label;
  }
}

/** The value itself, made from a {@link Deferred}. */
export function materialize(value: unknown): unknown {
  return value instanceof Deferred ? value.make() : value;
}

const digit = fc.constantFrom(...'0123456789');
const digitsText = (max: number) => fc.array(digit, { minLength: 0, maxLength: max }).map((d) => d.join(''));
const trap = fc.constantFrom(...TRAPS);

/** Decimal digits with a trap before, inside or after them: signs, spaces, radix prefixes, exponents, other scripts. */
export const decimalish = fc
  .tuple(fc.array(trap, { maxLength: 2 }), digitsText(24), fc.array(trap, { maxLength: 2 }), fc.nat(30), trap)
  .map(([before, digits, after, at, inner]) => {
    const body = at < digits.length && at % 3 === 0 ? digits.slice(0, at) + inner + digits.slice(at) : digits;
    return before.join('') + body + after.join('');
  });

/** Valid decimal text, often zero-padded, sometimes wider than any layout. */
export const decimalText = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) + 5n }).map(String),
  fc.tuple(fc.nat(30), fc.bigInt({ min: 0n, max: 1n << 63n })).map(([zeros, id]) => '0'.repeat(zeros) + String(id)),
  digitsText(40),
);

/** Any text at all, including lone surrogates and astral characters. */
export const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ maxLength: 30 }),
);

/** The megabyte texts, now and then: each run of a property with them costs real time. */
export const bigText = fc.constantFrom(
  ...Object.entries(BIG_TEXTS.mb).map(([shape, text]) => new Deferred(`(1 MB of ${shape})`, () => text)),
  ...Object.entries(BIG_TEXTS.kb100).map(([shape, text]) => new Deferred(`(100 KB of ${shape})`, () => text)),
);

/** Numbers a JSON body or a caller may send: -0, fractions, beyond 2^53, NaN and the infinities. */
export const numbers = fc.oneof(
  fc.integer({ min: -10, max: 10 }),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(-0, 0, 2 ** 53, 2 ** 53 + 2, 2 ** 63, -1, 1e21, 1.5, Number.NaN, Infinity, -Infinity),
);

export const bigints = fc.oneof(
  fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }),
  fc.constantFrom(-1n, 0n, (1n << 63n) - 1n, 1n << 63n, 1n << 64n, 10n ** 200n, -(10n ** 200n)),
);

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** Objects that disguise themselves as IDs, or break whoever touches them. */
export const disguised = (text: fc.Arbitrary<string>) =>
  fc.oneof(
    text.map((t) => ({ toString: () => t, valueOf: () => t })),
    text.map((t) => ({
      toString() {
        throw new TypeError(`toString of ${t.length} characters`);
      },
    })),
    text.map((t) => Object.assign(Object.create(null) as object, { id: t })),
    text.map((t) => JSON.parse(`{"__proto__": {"toString": 1, "id": ${JSON.stringify(t)}}}`) as object),
    text.map((t) => new String(t)),
    text.map((t) => [t]),
    text.map((t) => new Deferred(`(a transparent Proxy of { t: ${JSON.stringify(t)} })`, () => new Proxy({ t }, {}))),
    text.map(
      (t) =>
        new Deferred(
          `(a Proxy of [${JSON.stringify(t)}] whose get gives the text)`,
          () => new Proxy([t], { get: () => t }),
        ),
    ),
    fc.constant(new Deferred('(a revoked Proxy)', revokedProxy)),
    text.map(
      (t) =>
        new Deferred(
          `(a Proxy whose traps throw ${JSON.stringify(t)})`,
          () =>
            new Proxy(
              {},
              {
                getPrototypeOf() {
                  throw new TypeError(t);
                },
                get() {
                  throw new TypeError(t);
                },
                has() {
                  throw new TypeError(t);
                },
                ownKeys() {
                  throw new TypeError(t);
                },
              },
            ),
        ),
    ),
    fc.constant(null).map(() => Object(1n) as object),
    fc.constant(null).map(() => new Date(Number.NaN)),
    fc.constant(null).map(() => new Date(0)),
    fc.constant(null).map(() => Symbol('id')),
    fc.constant(null).map(() => () => 1),
    fc.constant(new Deferred('(an array of 100,000 ones)', () => Array.from({ length: 100_000 }, () => 1))),
  );

/** Every kind of value a reader of IDs may meet. */
export const hostileValue = (text: fc.Arbitrary<string>) =>
  fc.oneof(
    { arbitrary: text, weight: 6 },
    { arbitrary: decimalish, weight: 3 },
    { arbitrary: anyText, weight: 2 },
    { arbitrary: numbers, weight: 2 },
    { arbitrary: bigints, weight: 2 },
    { arbitrary: disguised(text), weight: 2 },
    { arbitrary: fc.constantFrom(null, undefined, true, false, [], {}), weight: 1 },
    { arbitrary: fc.array(fc.oneof(text, numbers), { maxLength: 4 }), weight: 1 },
    { arbitrary: bigText, weight: 1 },
  );

/** Swaps, drops, doubles or replaces one character of `text`, or changes its case: near misses of valid text. */
export const mutated = (text: fc.Arbitrary<string>) =>
  fc
    .tuple(text, fc.nat(), fc.constantFrom('swap', 'drop', 'double', 'replace', 'case', 'insert'), trap)
    .map(([t, at, how, inserted]) => {
      if (t.length === 0) return inserted;
      const i = at % t.length;
      switch (how) {
        case 'swap':
          return i + 1 < t.length ? t.slice(0, i) + t[i + 1] + t[i] + t.slice(i + 2) : t;
        case 'drop':
          return t.slice(0, i) + t.slice(i + 1);
        case 'double':
          return t.slice(0, i) + t[i] + t.slice(i);
        case 'replace':
          return t.slice(0, i) + 'iIlLoOuU!~ '[at % 11] + t.slice(i + 1);
        case 'case':
          return (
            t.slice(0, i) + (t[i] === t[i].toLowerCase() ? t[i].toUpperCase() : t[i].toLowerCase()) + t.slice(i + 1)
          );
        default:
          return t.slice(0, i) + inserted + t.slice(i);
      }
    });
