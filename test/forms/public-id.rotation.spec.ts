/**
 * Two keys of a ring whose tags meet across versions: a new key's current tag is an old key's earlier (version 2)
 * tag, about 1 in 16 new keys. The old key's version-2 texts are then read by two permutations. A genuine text
 * always passes the one that wrote it; about 1 in 17,800 (twitter) also passes the other, as another ID. Such a text
 * is refused as ambiguous rather than read as whichever permutation comes first: never another ID.
 */
import { resolveLayout } from '../../lib/core/layout.js';
import { BASE32, FixedWidthDigits } from '../../lib/forms/alphabet.js';
import { AesRound, FeistelPermutation } from '../../lib/forms/feistel.js';
import { InvalidPublicIdError } from '../../lib/forms/form.errors.js';
import { publicIdForm } from '../../lib/forms/public-id.form.js';
import { deriveKeys } from '../../lib/forms/public-id.keys.js';

const layout = resolveLayout('twitter');
const OLD = 'old-key-of-the-app-0123456789abcdef';
const tagsOf = (key: string) => deriveKeys('keys', [key], BASE32, { bound: 'any' }).readers.map((r) => r.tag);

/** The first key of a fixed series whose current tag is the old key's version-2 tag. */
function newKeyOnOldTag(): string {
  const [, oldV2] = tagsOf(OLD);
  for (let i = 0; ; i++) {
    const key = `new-key-of-the-app-${String(i).padStart(16, '0')}`;
    if (tagsOf(key)[0] === oldV2) return key;
  }
}

/** Writes as the previous release did with the old key: version 2 (AES-128 round), its own tag. */
function versionTwoWriter(): (id: bigint) => string {
  const checkBits = publicIdForm({ keys: [OLD], layout }).checkBits;
  const bound =
    `base32//${layout.totalBits}/${checkBits}/layout/${layout.epoch}/${layout.timeUnitMs}/${layout.timestampBits}/` +
    `${layout.datacenterBits}/${layout.workerBits}/${layout.sequenceBits}/${layout.shardBits}`;
  const v2 = deriveKeys('keys', [OLD], BASE32, { bound }).readers[1];
  const digits = new FixedWidthDigits(BASE32, layout.totalBits + checkBits);
  const permutation = new FeistelPermutation(new AesRound(v2.key), digits.bits);
  return (id) => BASE32.digits[v2.tag] + digits.encode(permutation.encrypt(id << BigInt(checkBits)));
}

describe('public IDs across a key rotation whose tags meet', () => {
  it('reads every old text as its own ID, or refuses it as ambiguous; never as another ID', () => {
    const NEW = newKeyOnOldTag();
    expect(tagsOf(NEW)[0]).toBe(tagsOf(OLD)[1]);
    const write = versionTwoWriter();
    const onlyOld = publicIdForm({ keys: [OLD], layout, maxFutureMs: Infinity });
    const rotated = publicIdForm({ keys: [NEW, OLD], layout, maxFutureMs: Infinity });
    const base = 1_795_000_000_000 - layout.epoch;
    let read = 0;
    const ambiguous: string[] = [];
    const misread: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      const id = (BigInt(base - i) << BigInt(layout.timestampShift)) | BigInt(i & 0xfff);
      const text = write(id);
      if (onlyOld.parse(text) !== id) misread.push(`${text} without the new key`);
      try {
        if (rotated.parse(text) === id) read++;
        else misread.push(text);
      } catch (error) {
        if (!(error instanceof InvalidPublicIdError) || error.reason !== 'ambiguous') throw error;
        ambiguous.push(text);
      }
    }
    expect(misread).toEqual([]);
    // Fixed keys and IDs: the same texts every run (this series meets the other permutation a few times).
    expect(ambiguous.length).toBeGreaterThan(0);
    expect(read + ambiguous.length).toBe(60_000);
    expect(() => rotated.parse(ambiguous[0])).toThrow(/share its key tag and both read it/);
  }, 60_000);
});
