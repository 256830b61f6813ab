/**
 * Numbers printed as C's `printf("%.<precision>g")` prints them (glibc): Lua 5.1's `tostring` and `..` use `%.14g`,
 * and Redis 7.0 passes a number given to `redis.call` as `%.17g`. JavaScript's `toPrecision` rounds a tie away from
 * zero; glibc rounds the exact binary value, a tie to even (123456789012345 is `1.2345678901234e+14`), so the digits
 * are worked out exactly here.
 */
import { UnsupportedLua } from './unsupported.js';

/** Lua 5.1's `%.14g` for a number, as `tostring` and `..` print it. */
export function luaNumberString(n: number): string {
  // The common case, whole numbers of up to 14 digits, prints as JavaScript prints them.
  if (Number.isInteger(n) && Math.abs(n) < 1e14 && !Object.is(n, -0)) return String(n);
  return formatG(n, 14);
}

/** A number as Redis 7.0 turns an argument of `redis.call` into a string: `%.17g`. */
export function redisArgumentString(n: number): string {
  // Whole numbers below 2^53 print as JavaScript prints them; above, JavaScript drops digits %.17g keeps.
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 53 && !Object.is(n, -0)) return String(n);
  return formatG(n, 17);
}

function formatG(n: number, precision: number): string {
  // C prints NaN with its sign bit (`-nan` for 0/0 on x86), which JavaScript does not keep.
  if (Number.isNaN(n)) throw new UnsupportedLua("printing NaN (Lua prints its sign, which JavaScript's NaN has not)");
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  if (n === 0) return `${sign}0`;
  const { digits, exponent } = rounded(exactDigits(Math.abs(n)), precision);
  if (exponent < -4 || exponent >= precision) {
    const mantissa = trimFraction(`${digits[0]}.${digits.slice(1)}`);
    const e = Math.abs(exponent);
    return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${String(e).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}${trimFraction(`0.${'0'.repeat(-exponent - 1)}${digits}`)}`;
  return `${sign}${trimFraction(`${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`)}`;
}

/** `%g` drops a fraction's trailing zeros, and the point if nothing is left after it. */
function trimFraction(text: string): string {
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
}

/** A positive finite double as `mantissa * 2^exponent`, exactly. */
export function decompose(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & 0xfffffffffffffn;
  return biased === 0
    ? { mantissa: fraction, exponent: -1074 }
    : { mantissa: fraction | (1n << 52n), exponent: biased - 1075 };
}

/** Every decimal digit of a positive finite double, and the power of ten of the first one. */
function exactDigits(x: number): { digits: string; exponent: number } {
  const { mantissa, exponent: power } = decompose(x);
  if (power >= 0) {
    const digits = (mantissa << BigInt(power)).toString();
    return { digits, exponent: digits.length - 1 };
  }
  // mantissa / 2^k = mantissa * 5^k / 10^k.
  const digits = (mantissa * 5n ** BigInt(-power)).toString();
  return { digits, exponent: digits.length - 1 + power };
}

/** The first `precision` digits, rounded as glibc rounds: up past a half, a tie to even. */
function rounded(exact: { digits: string; exponent: number }, precision: number): { digits: string; exponent: number } {
  const { digits, exponent } = exact;
  if (digits.length <= precision) return { digits: digits.padEnd(precision, '0'), exponent };
  const kept = digits.slice(0, precision);
  const rest = digits.slice(precision);
  const half = rest[0] === '5' && /^50*$/.test(rest);
  const up = rest[0] > '5' || (rest[0] === '5' && !half) || (half && Number(kept[kept.length - 1]) % 2 === 1);
  if (!up) return { digits: kept, exponent };
  const next = (BigInt(kept) + 1n).toString();
  // 999… rounds up to 1000…: one more digit, one more power of ten.
  return next.length > precision
    ? { digits: next.slice(0, precision), exponent: exponent + 1 }
    : { digits: next, exponent };
}

/**
 * A number given to a script as an argument, as ioredis sends it: `String(n)`, and a whole number beyond 2^53 with
 * every digit (`BigInt(n)`). Not Lua's printing: the client turns the number into text before Redis sees it.
 */
export function clientArgumentString(n: number): string {
  return Number.isInteger(n) && !Number.isSafeInteger(n) ? BigInt(n).toString() : String(n);
}
