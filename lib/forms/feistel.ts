import { createCipheriv, type Cipher } from 'node:crypto';

/** FF1's round count (NIST SP 800-38G); FF3-1 uses 8. */
const ROUNDS = 10;
/** Halves are JS numbers, and each round adds 48 bits of AES output modulo 2^half: at most 48 bits a half. */
const MAX_FEISTEL_BITS = 96;

/**
 * A keyed pseudorandom permutation of the integers below `2^bits`: a Feistel network of {@link ROUNDS} rounds in
 * FF1's shape (unbalanced halves for an odd width, addition modulo the half's size), with AES-128 as the round
 * function. Every value has exactly one image and one preimage under a key; without the key, images of consecutive
 * values look unrelated.
 *
 * The round function encrypts one block naming the round, the width and the half, so that permutations of other
 * widths under the same key are unrelated too. One ECB cipher object serves every call: with padding off, each
 * 16-byte `update()` is one AES encryption, independent of the ones before.
 *
 * @internal
 */
export class FeistelPermutation {
  /** Bits of the first (high) half; the second has `bits - high`, one more for an odd width. */
  private readonly high: number;
  private readonly low: number;
  private readonly lowMask: bigint;
  private readonly cipher: Cipher;
  private readonly block = Buffer.alloc(16);

  constructor(
    aesKey: Uint8Array,
    readonly bits: number,
  ) {
    if (!Number.isInteger(bits) || bits < 2 || bits > MAX_FEISTEL_BITS) {
      throw new RangeError(`a Feistel permutation of 2 to ${MAX_FEISTEL_BITS} bits, not ${bits}`);
    }
    this.high = Math.floor(bits / 2);
    this.low = bits - this.high;
    this.lowMask = (1n << BigInt(this.low)) - 1n;
    this.cipher = createCipheriv('aes-128-ecb', aesKey, null);
    this.cipher.setAutoPadding(false);
    this.block[1] = bits;
  }

  /** The image of `x`, which lies below `2^bits`. */
  encrypt(x: bigint): bigint {
    let a = Number(x >> BigInt(this.low));
    let b = Number(x & this.lowMask);
    for (let round = 0; round < ROUNDS; round++) {
      const size = 2 ** (round % 2 === 0 ? this.high : this.low);
      const c = (a + this.round(round, b)) % size;
      a = b;
      b = c;
    }
    return (BigInt(a) << BigInt(this.low)) | BigInt(b);
  }

  /** The preimage of `y`, which lies below `2^bits`: the rounds undone in reverse order. */
  decrypt(y: bigint): bigint {
    let a = Number(y >> BigInt(this.low));
    let b = Number(y & this.lowMask);
    for (let round = ROUNDS - 1; round >= 0; round--) {
      const size = 2 ** (round % 2 === 0 ? this.high : this.low);
      const c = b;
      b = a;
      a = (((c - this.round(round, b)) % size) + size) % size;
    }
    return (BigInt(a) << BigInt(this.low)) | BigInt(b);
  }

  /** 48 bits of AES(round, width, half): uniform modulo any power of two up to 2^48. */
  private round(round: number, half: number): number {
    this.block[0] = round;
    this.block.writeUIntBE(half, 10, 6);
    return this.cipher.update(this.block).readUIntBE(0, 6);
  }
}
