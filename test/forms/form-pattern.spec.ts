/**
 * The `pattern` of every form the library makes: an anchored regular expression that every text the form writes, and
 * every text it reads, matches (so that a document or a client that checks texts against it never refuses a good
 * one), while typical mistakes (a wrong character, length or prefix) do not match.
 */
import fc from 'fast-check';
import type { SnowflakeIdForm } from '../../lib/core/id-form.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { base32Form, base62Form, decimalForm } from '../../lib/forms/radix.form.js';

const twitter = resolveLayout('twitter');
const jsSafe = resolveLayout('js-safe');
const KEY = 'pattern-key-0123456789abcdef';

const FORMS: [string, SnowflakeIdForm, bigint][] = [
  ['decimal', decimalForm(), twitter.maxId],
  ['decimal with a prefix', decimalForm({ prefix: 'inv' }), twitter.maxId],
  ['base32', base32Form(), twitter.maxId],
  ['base32 with a prefix', base32Form({ prefix: 'ord' }), twitter.maxId],
  ['base32 of 53 bits', base32Form({ bits: jsSafe.totalBits }), jsSafe.maxId],
  ['base62', base62Form(), twitter.maxId],
  ['base62 with a prefix', base62Form({ prefix: 'user_account' }), twitter.maxId],
  ['public, base32, with a prefix', publicIdForm({ keys: [KEY], layout: twitter, prefix: 'user' }), twitter.maxId],
  ['public, base62', publicIdForm({ keys: [KEY], layout: jsSafe, alphabet: 'base62' }), jsSafe.maxId],
];

/** A character class with one member, to swap one character of a text for another. */
const anyCharacter = fc.constantFrom(...'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-+/ .é');

describe.each(FORMS)('the pattern of the %s form', (_name, form, maxId) => {
  const pattern = new RegExp(form.pattern!);
  // JSON Schema validators (ajv) compile patterns with the `u` flag: the source must be valid there too.
  const unicode = new RegExp(form.pattern!, 'u');
  const idArb = fc.oneof(fc.bigInt({ min: 0n, max: maxId }), fc.constantFrom(0n, 1n, maxId));

  it('is an anchored regular expression without flags', () => {
    expect(form.pattern).toMatch(/^\^.*\$$/);
  });

  it('matches every text the form writes', () => {
    fc.assert(
      fc.property(idArb, (id) => {
        const text = form.format(id);
        expect(text).toMatch(pattern);
        expect(text).toMatch(unicode);
      }),
      { numRuns: 2000 },
    );
  });

  it('matches every text the form reads, in either case where it reads both', () => {
    const variants = fc.tuple(idArb, fc.nat(), anyCharacter, fc.boolean()).map(([id, at, character, upper]) => {
      const text = form.format(id);
      const i = at % text.length;
      const changed = text.slice(0, i) + character + text.slice(i + 1);
      return upper ? changed.toUpperCase() : changed;
    });
    fc.assert(
      fc.property(variants, (text) => {
        let read = true;
        try {
          form.parse(text);
        } catch {
          read = false;
        }
        if (read) expect(text).toMatch(pattern);
      }),
      { numRuns: 3000 },
    );
  });

  it('does not match malformed texts: a foreign character, one character more or less, nothing', () => {
    const text = form.format(maxId >> 1n);
    for (const bad of [`${text}!`, ` ${text}`, text.slice(0, -1) + 'é', '', `x${text}`]) {
      expect(bad).not.toMatch(pattern);
    }
    if (form.name !== 'decimal') {
      expect(text.slice(0, -1)).not.toMatch(pattern);
      expect(`${text}0`).not.toMatch(pattern);
    }
  });
});

describe('patterns spelled out', () => {
  it('lists both cases of the Crockford digits for base32, and bounds the first digit by the bits', () => {
    expect(base32Form({ prefix: 'ord' }).pattern).toBe('^ord_[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{12}$');
    expect(base32Form({ bits: 53 }).pattern).toBe('^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{10}$');
    expect(base32Form().pattern).not.toMatch(/[iloIOLuU]/);
  });

  it('keeps case for base62 and reads leading zeros of any length in decimal', () => {
    expect(base62Form().pattern).toBe('^[0-9A][0-9A-Za-z]{10}$');
    expect(decimalForm({ prefix: 'inv' }).pattern).toBe('^inv_[0-9]+$');
    expect('inv_000000000000000000000000042').toMatch(new RegExp(decimalForm({ prefix: 'inv' }).pattern!));
  });

  it('opens public IDs with any digit as the key tag, so that a key added later keeps the same pattern', () => {
    const first = publicIdForm({ keys: [KEY], layout: twitter, prefix: 'user' });
    const rotated = publicIdForm({ keys: ['another-key-0123456789abcdef', KEY], layout: twitter, prefix: 'user' });
    expect(first.pattern).toBe(rotated.pattern);
    expect(first.pattern).toMatch(/^\^user_\[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z\]/);
    expect(first.format(42n)).toHaveLength(first.length);
  });
});
