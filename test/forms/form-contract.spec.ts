/**
 * The contract of `SnowflakeIdForm` that the pipe, the validators and the scalar rely on, checked on every form the
 * library ships: any text either reads as an ID that writes back to the same text (up to the case a form ignores),
 * or is refused with an `InvalidSnowflakeError`, never another error. Public forms also read the public IDs their
 * older versions wrote (another key tag, the text's first character): such a text writes back in the current
 * version, under the current tag, as a text that reads as the same ID.
 */
import fc from 'fast-check';
import { InvalidSnowflakeError } from '../../lib/core/errors.js';
import type { SnowflakeIdForm } from '../../lib/core/id-form.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { base32Form, base62Form, decimalForm } from '../../lib/forms/radix.form.js';

const layout = resolveLayout('js-safe');
const FORMS: [string, SnowflakeIdForm, (text: string) => string, { readsOlderVersions?: boolean }?][] = [
  ['decimal', decimalForm(), (t) => t.replace(/^0+(?=.)/, '')],
  ['decimal with a prefix', decimalForm({ prefix: 'inv' }), (t) => t.replace(/^inv_0+(?=.)/, 'inv_')],
  ['base32', base32Form({ bits: layout.totalBits }), (t) => t.toLowerCase()],
  ['base62 with a prefix', base62Form({ prefix: 'ord' }), (t) => t],
  [
    'public, base32',
    publicIdForm({ keys: ['contract-key-0123456789abcdef'], layout, checkBits: 1 }),
    (t) => t.toLowerCase(),
    { readsOlderVersions: true },
  ],
  [
    'public, base62',
    publicIdForm({ keys: ['contract-key-0123456789abcdef'], layout, alphabet: 'base62', checkBits: 0 }),
    (t) => t,
    { readsOlderVersions: true },
  ],
];

describe.each(FORMS)('the %s form keeps the SnowflakeIdForm contract', (_name, form, canonical, traits = {}) => {
  /** Texts close to valid ones (a valid text with a character changed, added or removed) and arbitrary ones. */
  const textArb = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom(...'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-') }),
    fc
      .tuple(fc.bigInt({ min: 0n, max: layout.maxId >> 8n }), fc.nat(), fc.string({ maxLength: 2 }), fc.nat({ max: 2 }))
      .map(([id, at, insert, removed]) => {
        const text = form.format(id);
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + removed);
      }),
  );

  it('reads any text as an ID that writes back to it, or refuses it with an InvalidSnowflakeError', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        let id: bigint;
        try {
          id = form.parse(text);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidSnowflakeError);
          return;
        }
        expect(typeof id).toBe('bigint');
        const written = form.format(id);
        if (traits.readsOlderVersions && written !== canonical(text)) {
          // Read under an older version's key tag (with no check bits, one random text in a few thousand is one).
          expect(canonical(text)[0]).not.toBe(written[0]);
          expect(form.parse(written)).toBe(id);
          return;
        }
        expect(written).toBe(canonical(text));
      }),
      // A text the base62 public form reads under an older version's tag.
      { numRuns: 3000, examples: [['wfBpOEqKbC']] },
    );
  });

  it('refuses values that are not strings with an InvalidSnowflakeError', () => {
    for (const value of [undefined, null, 42, 42n, {}, ['1']]) {
      expect(() => form.parse(value as string)).toThrow(InvalidSnowflakeError);
    }
  });
});
