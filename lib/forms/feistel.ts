import { createCipheriv, type Cipher } from 'node:crypto';
import { SipHash13 } from './siphash.js';

/** FF1's round count (NIST SP 800-38G); FF3-1 uses 8. */
const ROUNDS = 10;

/**
 * The rounds of a version-3 permutation of `bits`: FF3-1's 8 (NIST SP 800-38G Rev. 1) once both halves have 32 bits
 * or more, FF1's 10 below. The generic attacks on Feistel networks with pseudorandom round functions need a number
 * of queries that grows with the half's size and the rounds (Patarin: beyond 2^n for n-bit halves from 6 rounds
 * on); the known attacks on FF3 and FF1 need small domains and tweaks, and public IDs have no tweak. Every
 * public-ID block of a 53-bit or wider layout has halves of 32 bits or more.
 *
 * @internal
 */
export function roundsFor(bits: number): number {
  return Math.floor(bits / 2) >= 32 ? 8 : ROUNDS;
}
/** Halves are JS numbers, and each round adds 48 bits of PRF output modulo 2^half: at most 48 bits a half. */
const MAX_FEISTEL_BITS = 96;

/**
 * A Feistel network's round function: a keyed pseudorandom function of the round, the width and one half, 48 bits
 * of output (uniform modulo any power of two up to 2^48). @internal
 */
export interface RoundFunction {
  round(round: number, bits: number, half: number): number;
}

/**
 * The round function of public IDs since version 3: SipHash-1-3 (a PRF by design, siphash.ts) of the 7-byte message
 * `[half: 6 bytes][round: 1 byte]`. The width is not in the message, as it is in {@link AesRound}'s block: the key
 * of a version-3 permutation is derived for one form, whose label names the widths (public-id.keys.ts). Pure
 * JavaScript arithmetic with no call into native code, at about a tenth of the cost of an AES call through
 * `node:crypto`.
 *
 * @internal
 */
export class SipHashRound implements RoundFunction {
  private readonly sip: SipHash13;

  constructor(key: Uint8Array) {
    this.sip = new SipHash13(key);
  }

  round(round: number, _bits: number, half: number): number {
    return this.sip.low48(half, round);
  }
}

/**
 * The round function of public IDs before version 3, kept to read them: AES-128 of one block naming the round, the
 * width and the half, through `node:crypto`. One ECB cipher object serves every call: with padding off, each 16-byte
 * `update()` is one AES encryption, independent of the ones before.
 *
 * @internal
 */
export class AesRound implements RoundFunction {
  private readonly cipher: Cipher;
  private readonly block = Buffer.alloc(16);

  constructor(aesKey: Uint8Array) {
    this.cipher = createCipheriv('aes-128-ecb', aesKey, null);
    this.cipher.setAutoPadding(false);
  }

  /** 48 bits of AES(round, width, half). */
  round(round: number, bits: number, half: number): number {
    this.block[0] = round;
    this.block[1] = bits;
    this.block.writeUIntBE(half, 10, 6);
    return this.cipher.update(this.block).readUIntBE(0, 6);
  }
}

/**
 * A keyed pseudorandom permutation of the integers below `2^bits`: a Feistel network of {@link ROUNDS} rounds in
 * FF1's shape (unbalanced halves for an odd width, addition modulo the half's size), with a pseudorandom function as
 * the round function. Every value has exactly one image and one preimage under a key; without the key, images of
 * consecutive values look unrelated.
 *
 * The round function's input names the round and the width besides the half, so that permutations of other widths
 * under the same key are unrelated too.
 *
 * @internal
 */
export class FeistelPermutation {
  /** Bits of the first (high) half; the second has `bits - high`, one more for an odd width. */
  private readonly high: number;
  private readonly low: number;
  private readonly highSize: number;
  private readonly lowSize: number;
  private readonly lowShift: bigint;
  private readonly lowMask: bigint;
  /** The halves of the last {@link encryptHalves} or {@link decryptHalves}. */
  outHigh = 0;
  outLow = 0;

  constructor(
    private readonly f: RoundFunction,
    readonly bits: number,
    /** {@link ROUNDS} unless given (public IDs of version 3 take {@link roundsFor}). */
    readonly rounds = ROUNDS,
  ) {
    if (!Number.isInteger(bits) || bits < 2 || bits > MAX_FEISTEL_BITS) {
      throw new RangeError(`a Feistel permutation of 2 to ${MAX_FEISTEL_BITS} bits, not ${bits}`);
    }
    this.high = Math.floor(bits / 2);
    this.low = bits - this.high;
    this.highSize = 2 ** this.high;
    this.lowSize = 2 ** this.low;
    this.lowShift = BigInt(this.low);
    this.lowMask = (1n << this.lowShift) - 1n;
  }

  /** Bits of the low half of a `bits`-wide block, the second and larger one. */
  static lowBitsOf(bits: number): number {
    return bits - Math.floor(bits / 2);
  }

  /** The image of `x`, which lies below `2^bits`. */
  encrypt(x: bigint): bigint {
    this.encryptHalves(Number(x >> this.lowShift), Number(x & this.lowMask));
    return (BigInt(this.outHigh) << this.lowShift) | BigInt(this.outLow);
  }

  /** The preimage of `y`, which lies below `2^bits`. */
  decrypt(y: bigint): bigint {
    this.decryptHalves(Number(y >> this.lowShift), Number(y & this.lowMask));
    return (BigInt(this.outHigh) << this.lowShift) | BigInt(this.outLow);
  }

  /** The image of `high * 2^lowBits + low`, into {@link outHigh} and {@link outLow}: no bigint on the way. */
  encryptHalves(high: number, low: number): void {
    let a = high;
    let b = low;
    const f = this.f;
    for (let round = 0; round < this.rounds; round++) {
      const size = round % 2 === 0 ? this.highSize : this.lowSize;
      // a + F(b) modulo a power of two, below 2^49: exact in a double, and floor() is cheaper than `%` on one.
      const sum = a + f.round(round, this.bits, b);
      a = b;
      b = sum - Math.floor(sum / size) * size;
    }
    this.outHigh = a;
    this.outLow = b;
  }

  /** The preimage of `high * 2^lowBits + low`, into {@link outHigh} and {@link outLow}: the rounds in reverse. */
  decryptHalves(high: number, low: number): void {
    let a = high;
    let b = low;
    const f = this.f;
    for (let round = this.rounds - 1; round >= 0; round--) {
      const size = round % 2 === 0 ? this.highSize : this.lowSize;
      const c = b;
      b = a;
      const difference = c - f.round(round, this.bits, b);
      a = difference - Math.floor(difference / size) * size;
    }
    this.outHigh = a;
    this.outLow = b;
  }
}
