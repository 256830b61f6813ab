import { randomBytes, randomInt } from 'node:crypto';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { InvalidSnowflakeError, SnowflakeConfigError } from '../../lib/core/errors.js';
import { resolveLayout, type LayoutOptions } from '../../lib/core/layout.js';
import { InvalidPublicIdError, InvalidSnowflakeTextError } from '../../lib/forms/form.errors.js';
import { publicIdForm, type PublicIdFormOptions } from '../../lib/forms/public-id.form.js';

const KEY = 'k3y-0f-the-app-0123456789abcdef';
const OLD_KEY = 'an-older-key-0123456789abcdef';
/** A fixed instant in the past for the IDs of single checks: each check then has one outcome, not a chance. */
const ISSUED_AT = Date.UTC(2026, 5, 1);
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
/** A clock past the end of every layout here, so that the time check lets every ID through. */
const FAR_FUTURE = { now: () => 8.64e15 };

/** A 16-bit layout whose whole time range lies in the past of `FAR_FUTURE`: 10 ticks of a second, 2 worker bits. */
const EPOCH = Date.UTC(2026, 0, 1);
const TINY = { epoch: EPOCH, timeUnitMs: 1000, timestampBits: 10, workerBits: 2, sequenceBits: 4, minLifetimeYears: 0 };
const tiny = resolveLayout(TINY as LayoutOptions, EPOCH);
const twitter = resolveLayout('twitter');

function rejection(call: () => unknown): InvalidSnowflakeError {
  try {
    call();
  } catch (error) {
    if (error instanceof InvalidSnowflakeError) return error;
    throw error;
  }
  throw new Error('expected the value to be refused, but it was read');
}

function accepted(call: () => unknown): boolean {
  try {
    call();
    return true;
  } catch (error) {
    if (error instanceof InvalidPublicIdError) return false;
    throw error;
  }
}

/** A secret whose key tag is the tag of `of` (about 1 in 32 secrets is one). */
function secretWithTagOf(of: string, alphabet: 'base32' | 'base62' = 'base32'): string {
  const tagOf = (key: string) => publicIdForm({ keys: [key], layout: tiny, alphabet }).format(0n)[0];
  for (let i = 0; ; i++) {
    const candidate = `another-secret-${String(i).padStart(16, '0')}`;
    if (tagOf(candidate) === tagOf(of)) return candidate;
  }
}

describe('publicIdForm', () => {
  it('is a bijection on a 16-bit layout: every ID has its own public ID, and reads back to it', () => {
    const form = publicIdForm({ keys: [KEY], layout: tiny, clock: FAR_FUTURE });
    const seen = new Set<string>();
    const wrong: string[] = [];
    for (let id = 0n; id <= tiny.maxId; id++) {
      const text = form.format(id);
      seen.add(text);
      if (text.length !== form.length || form.parse(text) !== id) wrong.push(`${id} → ${text}`);
    }
    expect(wrong).toEqual([]);
    expect(seen.size).toBe(2 ** 16);
  });

  it('accepts exactly 2^-checkBits of all values with its tag: the images of the IDs, no others', () => {
    // 2 check bits on a 14-bit layout: all 2^16 blocks, each tried. Exactly the 2^14 images must pass.
    const small = resolveLayout({ ...TINY, timestampBits: 8 } as LayoutOptions, EPOCH);
    const form = publicIdForm({ keys: [KEY], layout: small, clock: FAR_FUTURE, checkBits: 2 });
    expect(form.checkBits).toBe(2);
    const tag = form.format(0n)[0];
    const images = new Set<string>();
    for (let id = 0n; id <= small.maxId; id++) images.add(form.format(id));
    const passed: string[] = [];
    for (let block = 0n; block < 1n << 16n; block++) {
      const text = tag + base32(block, form.length - 1);
      if (accepted(() => form.parse(text))) passed.push(text);
    }
    expect(passed).toHaveLength(2 ** 14);
    expect(passed.filter((text) => !images.has(text))).toEqual([]);
  });

  it('writes known public IDs, so that stored and linked ones keep their meaning across versions', () => {
    // Known answers. A change to the permutation, the key derivation or the text breaks every public ID in
    // circulation: it needs a new form (another derivation label), never an edit of these values.
    const id = 2125018075706167296n;
    // Version 3 (SipHash-1-3 rounds), under the tag of the first version moved on by a quarter of the alphabet.
    const known = [
      [{}, ['pwehndjgzpvkg5vq', 'p9q09xe75m180ccy', 'pq3vw8w5ww4v22hq']],
      [{ alphabet: 'base62' as const }, ['zLKpOdbFM6cN9L', 'z4HOtexUaNw7jY', 'zQBuZDgHlX2vh3']],
      [{ prefix: 'user' }, ['user_pmt3mdzx301x4qeh', 'user_pqg4n8zkjh06mmb0', 'user_pqkarpfff87r9pk8']],
    ] as const;
    for (const [options, texts] of known) {
      // The largest ID lies in 2080: read with a clock past it.
      const form = publicIdForm({ keys: [KEY], layout: twitter, clock: FAR_FUTURE, ...options });
      expect([id, 0n, twitter.maxId].map((x) => form.format(x))).toEqual(texts);
      expect(texts.map((text) => form.parse(text))).toEqual([id, 0n, twitter.maxId]);
    }
  });

  it('reads the public IDs version 2 wrote (AES-128 rounds), whatever readLegacyIds says', () => {
    // Known answers of version 2, under its tag (the first version's moved on by half the alphabet).
    const id = 2125018075706167296n;
    const written = [
      [{}, ['yeqyqzrs5s73yem2', 'yywb1078xv63ndha', 'y8gjgm0hhbmpdymd']],
      [{ alphabet: 'base62' as const }, ['F48VVrh4jTffts', 'FX4V0Q8hlcwJKJ', 'F7nLNtByzVLjD1']],
      [{ prefix: 'user' }, ['user_yamp1qqnkbfwqan8', 'user_y7q6kjcjc8w2geye', 'user_y1162r4khsene889']],
    ] as const;
    for (const [options, texts] of written) {
      for (const readLegacyIds of [true, false]) {
        const form = publicIdForm({ keys: [KEY], layout: twitter, clock: FAR_FUTURE, readLegacyIds, ...options });
        expect(texts.map((text) => form.parse(text))).toEqual([id, 0n, twitter.maxId]);
        // Written again, the ID takes version 3's text, which reads back to it too.
        expect(form.format(id)).not.toBe(texts[0]);
        expect(form.parse(form.format(id))).toBe(id);
      }
    }
  });

  it('reads the public IDs written before the key covered the layout, until readLegacyIds is false', () => {
    // Known answers of the derivation without the layout, under the tag it gave: what earlier versions wrote.
    const id = 2125018075706167296n;
    const legacy = [
      [{}, ['ehf67ke21tggwe4c', 'e351fr04q46ngd86', 'e37kw060243rrg8m']],
      [{ alphabet: 'base62' as const }, ['kj1Db7ULipBkZZ', 'kDuKMk1Y3dVbov', 'k2iAMC75P8LH21']],
      [{ prefix: 'user' }, ['user_e8pegq2pmxj7t3me', 'user_exe4qvnk31gf97yv', 'user_e9n6xqx87xannvnd']],
    ] as const;
    for (const [options, texts] of legacy) {
      const form = publicIdForm({ keys: [KEY], layout: twitter, clock: FAR_FUTURE, ...options });
      expect(texts.map((text) => form.parse(text))).toEqual([id, 0n, twitter.maxId]);
      const strict = publicIdForm({
        keys: [KEY],
        layout: twitter,
        clock: FAR_FUTURE,
        readLegacyIds: false,
        ...options,
      });
      for (const text of texts) expect(rejection(() => strict.parse(text))).toMatchObject({ reason: 'key' });
    }
  });

  it('round-trips random IDs of the twitter layout, distinct and of one width, in both alphabets', () => {
    for (const alphabet of ['base32', 'base62'] as const) {
      const form = publicIdForm({ keys: [KEY], layout: twitter, alphabet, prefix: 'user' });
      const ids = uniformIds(3000, new SnowflakeCodec(twitter).maxIdAt(Date.now()));
      const texts = new Set<string>();
      for (const id of ids) {
        const text = form.format(id);
        expect(text).toHaveLength(form.length);
        expect(form.parse(text)).toBe(id);
        texts.add(text);
      }
      expect(texts.size).toBe(new Set(ids).size);
    }
  });

  it('has the documented widths and check bits', () => {
    const widths = (['twitter', 'default', 'js-safe'] as const).flatMap((layout) =>
      (['base32', 'base62'] as const).map((alphabet) => {
        const form = publicIdForm({ keys: [KEY], layout, alphabet });
        return `${layout} ${alphabet}: ${form.length} characters, ${form.checkBits} check bits`;
      }),
    );
    expect(widths).toEqual([
      'twitter base32: 16 characters, 12 check bits',
      'twitter base62: 14 characters, 14 check bits',
      'default base32: 16 characters, 12 check bits',
      'default base62: 14 characters, 14 check bits',
      'js-safe base32: 14 characters, 12 check bits',
      'js-safe base62: 12 characters, 12 check bits',
    ]);
  });

  it('refuses a public ID written with another key, whether its tag differs or happens to be the same', () => {
    const ours = publicIdForm({ keys: [KEY], layout: twitter });
    const theirs = publicIdForm({ keys: [OLD_KEY], layout: twitter });
    const id = new SnowflakeCodec(twitter).compose({ timestamp: ISSUED_AT, workerId: 3, sequence: 7 });
    expect(theirs.format(id)[0]).not.toBe(ours.format(id)[0]);
    expect(rejection(() => ours.parse(theirs.format(id)))).toMatchObject({
      name: 'InvalidPublicIdError',
      reason: 'key',
    });

    // A foreign key with the same tag: the check bits refuse all but about 2^-12 of its IDs.
    const sameTag = publicIdForm({ keys: [secretWithTagOf(KEY)], layout: twitter });
    const ids = uniformIds(2000, id);
    const through = ids.filter((x) => accepted(() => ours.parse(sameTag.format(x))));
    // Expected 2000 · 2^-12 · (share of the time range before now) ≈ 0.1; 4 or more has a chance below 10^-5.
    expect(through.length).toBeLessThanOrEqual(3);
    expect(rejection(() => ours.parse(sameTag.format(id)))).toMatchObject({ reason: 'check' });
  });

  it('refuses altered public IDs at the rate the check bits promise (2^-checkBits)', () => {
    // 4 check bits and no time check, so that the rate is large enough to measure: 1/16.
    const form = publicIdForm({ keys: [KEY], layout: twitter, checkBits: 4, maxFutureMs: Infinity });
    // 63 + 4 bits in 14 characters: the first holds 2 bits (0 to 3), the others 5.
    const firstDigits = 2 ** (63 + 4 - 5 * 13);
    const n = 20_000;
    let through = 0;
    for (const id of uniformIds(n, twitter.maxId)) {
      const text = form.format(id);
      const position = 1 + randomInt(text.length - 1);
      const digits = position === 1 ? firstDigits : 32;
      // Another digit of those the position can hold, so that the altered text is of the right shape.
      const digit = BASE32[(BASE32.indexOf(text[position]) + 1 + randomInt(digits - 1)) % digits];
      const altered = text.slice(0, position) + digit + text.slice(position + 1);
      if (accepted(() => form.parse(altered))) through++;
    }
    // Binomial(20000, 1/16): mean 1250, standard deviation 34.2; ±5 deviations fail by chance with p < 10^-6.
    expect(Math.abs(through - n / 16)).toBeLessThan(5 * Math.sqrt((n * (1 / 16) * 15) / 16));
  });

  it("refuses, by the time check, values whose ID lies ahead of the clock, at the share of the layout's range", () => {
    // No check bits: only the time check refuses. The clock stands a quarter into the twitter layout's range.
    const now = twitter.epoch + Math.floor((twitter.maxTimestamp + 1) / 4);
    const form = publicIdForm({
      keys: [KEY],
      layout: twitter,
      checkBits: 0,
      maxFutureMs: 0,
      clock: { now: () => now },
    });
    const tag = form.format(0n)[0];
    const n = 20_000;
    const bodies = uniformIds(n, twitter.maxId);
    const through = bodies.filter((block) => accepted(() => form.parse(tag + base32(block, form.length - 1)))).length;
    // Binomial(20000, 1/4): standard deviation 61; ±5 deviations.
    expect(Math.abs(through - n / 4)).toBeLessThan(5 * Math.sqrt(n * 0.25 * 0.75));

    const codec = new SnowflakeCodec(twitter);
    const ahead = codec.compose({ timestamp: now + 1000 });
    expect(rejection(() => form.parse(form.format(ahead)))).toMatchObject({ reason: 'check' });
    expect(form.parse(form.format(codec.compose({ timestamp: now })))).toBe(codec.compose({ timestamp: now }));
    const tolerant = publicIdForm({ keys: [KEY], layout: twitter, maxFutureMs: 2000, clock: { now: () => now } });
    expect(tolerant.parse(tolerant.format(ahead))).toBe(ahead);
  });

  it('rotates keys: the first writes, all read; a key dropped no longer reads', () => {
    const id = new SnowflakeCodec(twitter).compose({ timestamp: ISSUED_AT, sequence: 1 });
    const before = publicIdForm({ keys: [OLD_KEY], layout: twitter });
    const reading = publicIdForm({ keys: [OLD_KEY, KEY], layout: twitter }); // step 1: every instance reads the new
    const writing = publicIdForm({ keys: [KEY, OLD_KEY], layout: twitter }); // step 2: the new key writes
    const after = publicIdForm({ keys: [KEY], layout: twitter });
    const oldText = before.format(id);
    expect(reading.format(id)).toBe(oldText);
    const newText = writing.format(id);
    expect(newText).not.toBe(oldText);
    for (const form of [reading, writing]) {
      expect(form.parse(oldText)).toBe(id);
      expect(form.parse(newText)).toBe(id);
    }
    expect(after.parse(newText)).toBe(id);
    expect(rejection(() => after.parse(oldText))).toMatchObject({ reason: 'key' });
  });

  it('ties public IDs to their prefix: the same ID under another prefix is unrelated and refused', () => {
    const users = publicIdForm({ keys: [KEY], layout: twitter, prefix: 'user' });
    const orders = publicIdForm({ keys: [KEY], layout: twitter, prefix: 'ord' });
    const id = new SnowflakeCodec(twitter).compose({ timestamp: ISSUED_AT });
    const user = users.format(id);
    expect(user.startsWith('user_')).toBe(true);
    expect(orders.format(id).slice(4)).not.toBe(user.slice(5));
    expect(rejection(() => users.parse(orders.format(id)))).toBeInstanceOf(InvalidSnowflakeTextError);
    expect(rejection(() => orders.parse(`ord_${user.slice(5)}`))).toBeInstanceOf(InvalidPublicIdError);
  });

  it('refuses malformed text with the position and the character, before any key is tried', () => {
    const form = publicIdForm({ keys: [KEY], layout: twitter, prefix: 'user' });
    const text = form.format(123n << 22n);
    expect(rejection(() => form.parse(`${text.slice(0, 9)}o${text.slice(10)}`))).toMatchObject({
      name: 'InvalidSnowflakeTextError',
      position: 9,
      character: 'o',
    });
    expect(rejection(() => form.parse(`user_!${text.slice(6)}`))).toMatchObject({ position: 5, character: '!' });
    expect(rejection(() => form.parse(text.slice(0, -1)))).toBeInstanceOf(InvalidSnowflakeTextError);
    expect(form.parse(text.toUpperCase().replace('USER_', 'user_'))).toBe(123n << 22n);
  });

  it('writes only IDs of its layout', () => {
    const form = publicIdForm({ keys: [KEY], layout: 'js-safe' });
    expect(() => form.format(1n << 53n)).toThrow(/from 0 to 9007199254740991 \(53 bits\)/);
    expect(() => form.format(-1n)).toThrow(InvalidSnowflakeError);
  });

  it.each<[string, Partial<PublicIdFormOptions>, string]>([
    ['no keys', { keys: [] }, 'keys'],
    ['a short key', { keys: [KEY, 'short'] }, 'keys[1]'],
    ['a key that is not a string', { keys: [42 as unknown as string] }, 'keys[0]'],
    ['the same key twice', { keys: [KEY, KEY] }, 'keys[1]'],
    ['an unknown alphabet', { alphabet: 'base64' as 'base32' }, 'alphabet'],
    ['too many check bits', { checkBits: 33 }, 'checkBits'],
    ['negative maxFutureMs', { maxFutureMs: -1 }, 'maxFutureMs'],
    ['a bad prefix', { prefix: 'User' }, 'prefix'],
    ['an unknown option', { chekBits: 3 } as Partial<PublicIdFormOptions>, 'chekBits'],
  ])('refuses %s, naming the option', (_what, options, option) => {
    let error: unknown;
    try {
      publicIdForm({ keys: [KEY], layout: twitter, ...options });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as SnowflakeConfigError).option).toBe(option);
  });

  it('refuses two keys that share a key tag, asking for another key', () => {
    expect(() => publicIdForm({ keys: [KEY, secretWithTagOf(KEY)], layout: twitter })).toThrow(
      /keys\[1\].*is the tag of keys\[0\].*generate another key/,
    );
  });
});

/** A value as `width` base32 digits. */
function base32(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++, value >>= 5n) out = BASE32[Number(value & 31n)] + out;
  return out;
}

/**
 * `n` IDs drawn uniformly from 0..max. Rates are measured on these rather than on fast-check's samples, which favour
 * small values and edges and repeat them: repeats would make the counts vary more than a binomial's.
 */
function uniformIds(n: number, max: bigint): bigint[] {
  const bits = BigInt(max.toString(2).length);
  const out: bigint[] = [];
  while (out.length < n) {
    const value = randomBytes(8).readBigUInt64BE() & ((1n << bits) - 1n);
    if (value <= max) out.push(value);
  }
  return out;
}
