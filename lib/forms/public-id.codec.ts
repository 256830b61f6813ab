/**
 * Writing and reading public IDs: the key tag, the keyed permutation of the ID and its check bits, and the time
 * check on reading. The options and their checks are in `public-id.form.ts`, which builds this.
 */
import { readNow, type Clock } from '../core/clock.js';
import type { Layout } from '../core/layout.js';
import { FixedWidthDigits, characterClass, fixedWidthPattern, notADigit, type Alphabet } from './alphabet.js';
import { Base32Halves } from './base32-halves.js';
import { AesRound, FeistelPermutation, SipHashRound, roundsFor } from './feistel.js';
import { InvalidPublicIdError } from './form.errors.js';
import { checkShape } from './prefix.js';
import type { PublicIdForm } from './public-id.form.js';
import type { DerivedKey, KeyRing } from './public-id.keys.js';
import { checkId } from './radix.form.js';

function permutationOf(key: DerivedKey, bits: number): FeistelPermutation {
  return key.round === 'siphash-1-3'
    ? new FeistelPermutation(new SipHashRound(key.key), bits, roundsFor(bits))
    : new FeistelPermutation(new AesRound(key.key), bits);
}

/** A public-ID form over validated parts. */
export class PublicIds implements PublicIdForm {
  readonly name = 'public';
  readonly length: number;
  readonly pattern: string;
  private readonly writer: { tag: string; permutation: FeistelPermutation };
  /**
   * Tag value → the permutations that read it: one, unless a key's earlier tag is another key's current one. A text
   * is then an ID only when exactly one of them reads it (its check bits zero, its time not ahead): a genuine text
   * always passes the permutation that wrote it, and one that passes both is refused as ambiguous rather than read
   * as whichever comes first.
   */
  private readonly readers = new Map<number, FeistelPermutation[]>();
  private readonly checkMask: bigint;
  private readonly shift: bigint;
  private readonly timestampShift: bigint;
  /** Base32's reader and writer on the permutation's halves, without a bigint; undefined for base62. */
  private readonly halves: Base32Halves | undefined;
  private readonly lowBits: number;
  private readonly lowShift: bigint;
  private readonly lowMask: bigint;
  /** 2^checkBits, and for check bits that reach into the high half, 2^(checkBits - lowBits). */
  private readonly checkSize: number;
  private readonly highCheckSize: number;

  constructor(
    private readonly alphabet: Alphabet,
    private readonly head: string,
    private readonly digits: FixedWidthDigits,
    keys: KeyRing,
    readonly checkBits: number,
    private readonly layout: Layout,
    private readonly clock: Clock,
    private readonly maxFutureMs: number,
  ) {
    const writer = permutationOf(keys.writer, digits.bits);
    this.writer = { tag: alphabet.digits[keys.writer.tag], permutation: writer };
    for (const key of keys.readers) {
      const permutation = key === keys.writer ? writer : permutationOf(key, digits.bits);
      this.readers.set(key.tag, [...(this.readers.get(key.tag) ?? []), permutation]);
    }
    this.length = head.length + 1 + digits.width;
    // Any digit as the key tag, not only the configured keys' tags: the document stays the same across a key
    // rotation, and a client checking texts against it does not refuse the IDs of a key added later.
    this.pattern = fixedWidthPattern(head, digits, characterClass(alphabet));
    this.shift = BigInt(checkBits);
    this.checkMask = (1n << this.shift) - 1n;
    this.timestampShift = BigInt(layout.timestampShift);
    this.lowBits = FeistelPermutation.lowBitsOf(digits.bits);
    this.lowShift = BigInt(this.lowBits);
    this.lowMask = (1n << this.lowShift) - 1n;
    this.checkSize = 2 ** checkBits;
    this.highCheckSize = 2 ** Math.max(0, checkBits - this.lowBits);
    this.halves =
      alphabet.digits.length === 32 ? new Base32Halves(alphabet, digits.width, digits.bits, this.lowBits) : undefined;
  }

  format(id: bigint): string {
    checkId(id, this.layout.maxId, this.layout.totalBits, this.name);
    const block = id << this.shift;
    const { permutation } = this.writer;
    if (this.halves === undefined) return this.head + this.writer.tag + this.digits.encode(permutation.encrypt(block));
    permutation.encryptHalves(Number(block >> this.lowShift), Number(block & this.lowMask));
    return this.head + this.writer.tag + this.halves.write(permutation.outHigh, permutation.outLow);
  }

  parse(text: string): bigint {
    checkShape(text, this.head, 1 + this.digits.width, this.name);
    const at = this.head.length;
    const code = text.charCodeAt(at);
    const tag = code < 128 ? this.alphabet.values[code] : -1;
    if (tag < 0) throw notADigit(text, this.alphabet, this.name, at);
    const permutations = this.readers.get(tag);
    if (permutations === undefined) throw new InvalidPublicIdError(text, 'key');
    const latest = readNow(this.clock) + this.maxFutureMs;
    const { halves } = this;
    let found: bigint | undefined;
    if (halves !== undefined && halves.read(text, at + 1)) {
      for (const permutation of permutations) {
        permutation.decryptHalves(halves.high, halves.low);
        const id = this.idOf(permutation.outHigh, permutation.outLow, latest);
        if (id === undefined) continue;
        if (found !== undefined && found !== id) throw new InvalidPublicIdError(text, 'ambiguous');
        found = id;
      }
      if (found === undefined) throw new InvalidPublicIdError(text, 'check');
      return found;
    }
    // Base62, or a text the fast reader leaves to this one, which names what is wrong with it.
    const value = this.digits.decode(text, at + 1, this.name);
    for (const permutation of permutations) {
      const block = permutation.decrypt(value);
      if ((block & this.checkMask) !== 0n) continue;
      const id = block >> this.shift;
      const issuedAt = this.layout.epoch + Number(id >> this.timestampShift) * this.layout.timeUnitMs;
      if (issuedAt > latest) continue;
      if (found !== undefined && found !== id) throw new InvalidPublicIdError(text, 'ambiguous');
      found = id;
    }
    if (found === undefined) throw new InvalidPublicIdError(text, 'check');
    return found;
  }

  /** The ID of a decrypted block in halves, or undefined when its check bits or its time refuse it. */
  private idOf(high: number, low: number, latest: number): bigint | undefined {
    // The check bits are the block's lowest: all of them in the low half, or the whole low half and some of the high.
    if (this.checkBits <= this.lowBits) {
      if (low % this.checkSize !== 0) return undefined;
    } else if (low !== 0 || high % this.highCheckSize !== 0) {
      return undefined;
    }
    const id = ((BigInt(high) << this.lowShift) | BigInt(low)) >> this.shift;
    const issuedAt = this.layout.epoch + Number(id >> this.timestampShift) * this.layout.timeUnitMs;
    return issuedAt <= latest ? id : undefined;
  }
}
