/**
 * The values and operators of Lua 5.1 (the Lua of Redis), for scripts compiled to JavaScript (compile.ts): nil is
 * `undefined`, booleans and numbers (doubles, as in 5.1) are JavaScript's, a string is a JavaScript string of one
 * character per byte, a table is a {@link LuaTable}. Every operator checks its operands' types as Lua does and raises a
 * {@link LuaError} where Lua raises an error (JavaScript would go on with `NaN` or `"undefined"`).
 */
import { decompose, luaNumberString } from './number-string.js';
import { UnsupportedLua } from './unsupported.js';

/** A Lua runtime error: the script stops, and Redis answers with an error. */
export class LuaError extends Error {}

/** More than one value, as a call returns them (`return a, b`, `string.match` with two captures). */
export class LuaMulti extends Array<unknown> {}

/** No value at all, as a function that returns nothing gives (`type(f())` is then an error, where nil is a value). */
export const NONE: LuaMulti = Object.freeze(new LuaMulti());

/**
 * A Lua table: the array part `1..n` in a JavaScript array, every other key in a map. The array part may hold nils
 * (holes: `{nil, 2}`, or `t[1] = nil`), never a trailing one.
 */
export class LuaTable {
  readonly array: unknown[];
  private hash: Map<unknown, unknown> | undefined;
  /** Nils inside the array part. */
  private holes = 0;
  /** Keys of the map that are positive integers (beyond the array part, after a gap). */
  private integerKeys = 0;

  constructor(array: unknown[] = []) {
    let n = array.length;
    while (n > 0 && array[n - 1] === undefined) n--;
    array.length = n;
    this.array = array;
    for (const item of array) if (item === undefined) this.holes++;
  }

  get(key: unknown): unknown {
    if (typeof key === 'number') {
      const array = this.array;
      if (key >= 1 && key <= array.length && Number.isInteger(key)) return array[key - 1];
    }
    return this.hash?.get(key);
  }

  set(key: unknown, value: unknown): void {
    if (key === undefined) throw new LuaError('table index is nil');
    if (typeof key === 'number') {
      if (Number.isNaN(key)) throw new LuaError('table index is NaN');
      const array = this.array;
      if (Number.isInteger(key) && key >= 1 && key <= array.length + 1) {
        if (key <= array.length) {
          const before = array[key - 1];
          array[key - 1] = value;
          if (before === undefined && value !== undefined) this.holes--;
          else if (before !== undefined && value === undefined) {
            this.holes++;
            if (key === array.length) this.trim();
          }
        } else if (value !== undefined) {
          array.push(value);
          this.migrate();
        }
        return;
      }
    }
    const hash = (this.hash ??= new Map());
    const counted = isPositiveInteger(key);
    if (value === undefined) {
      if (hash.delete(key) && counted) this.integerKeys--;
    } else {
      if (counted && !hash.has(key)) this.integerKeys++;
      hash.set(key, value);
    }
  }

  /**
   * `#t`: a border, which is one number only where the keys `1..n` are all there and no positive integer key lies
   * beyond. Elsewhere C Lua's answer depends on how its array and hash parts were sized (`#{nil, 2, nil}` is 0,
   * `local t = {1, 2}; t[4] = 4; return #t` is 4), which is not modelled: refused rather than guessed.
   */
  length(): number {
    if (this.holes > 0 || this.integerKeys > 0) {
      throw new UnsupportedLua("the length of a table with holes (its border depends on C Lua's table layout)");
    }
    return this.array.length;
  }

  private trim(): void {
    const array = this.array;
    while (array.length > 0 && array[array.length - 1] === undefined) {
      array.length--;
      this.holes--;
    }
  }

  /** Keys `n+1, n+2, …` set before the array reached them move into it. */
  private migrate(): void {
    const hash = this.hash;
    if (hash === undefined || this.integerKeys === 0) return;
    for (;;) {
      const key = this.array.length + 1;
      const value = hash.get(key);
      if (value === undefined) return;
      hash.delete(key);
      this.integerKeys--;
      this.array.push(value);
    }
  }
}

function isPositiveInteger(key: unknown): boolean {
  return typeof key === 'number' && Number.isInteger(key) && key >= 1;
}

export function typeName(value: unknown): string {
  if (value === undefined) return 'nil';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'string') return 'string';
  if (value instanceof LuaTable) return 'table';
  return 'function';
}

/** The first of a call's values (a call in the middle of a list, or in an expression, gives one). */
export function first(value: unknown): unknown {
  return value instanceof LuaMulti ? value[0] : value;
}

/** Every value of a call, for the last place of a list. */
export function all(value: unknown): unknown[] {
  return value instanceof LuaMulti ? value : [value];
}

/**
 * Lua 5.1's conversion of a string to a number (`luaO_str2d`), else nil: what glibc's strtod reads (a decimal, a
 * hexadecimal number with an optional fraction and binary exponent, `inf`, `infinity`, `nan`, each with an optional
 * sign) between optional spaces, and nothing else. Lua reads the string as C does, up to its first NUL.
 */
export function stringToNumber(text: string): number | undefined {
  if (isDecimalInteger(text)) return Number(text);
  const nul = text.indexOf('\0');
  const found = NUMERIC.exec(nul < 0 ? text : text.slice(0, nul));
  if (found === null) return undefined;
  const [, sign, decimal, hexInteger, hexFraction, binaryExponent, infinity] = found;
  let n: number;
  if (decimal !== undefined) n = Number(decimal);
  else if (hexInteger !== undefined) {
    const digits = hexInteger + (hexFraction ?? '');
    n = parseInt(digits || '0', 16) / 16 ** (hexFraction?.length ?? 0);
    if (binaryExponent !== undefined) n *= 2 ** Number(binaryExponent);
  } else n = infinity !== undefined ? Infinity : NaN;
  return sign === '-' ? -n : n;
}

const NUMERIC = new RegExp(
  '^[ \\t\\n\\v\\f\\r]*([-+]?)(?:' +
    '((?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)' +
    '|0[xX](?=\\.?[0-9a-fA-F])([0-9a-fA-F]*)(?:\\.([0-9a-fA-F]*))?(?:[pP]([-+]?\\d+))?' +
    '|(inf(?:inity)?)|nan(?:\\([0-9A-Za-z_]*\\))?' +
    ')[ \\t\\n\\v\\f\\r]*$',
  'i',
);

/** The scripts' usual number, read without a regular expression: `-?[0-9]+`, short enough to be exact. */
function isDecimalInteger(text: string): boolean {
  const n = text.length;
  if (n === 0 || n > 15) return false;
  for (let i = text.charCodeAt(0) === 45 && n > 1 ? 1 : 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** An arithmetic operand: a number, or a string that reads as one (Lua coerces), else an error. */
export function arithmetic(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') {
    const n = stringToNumber(value);
    if (n !== undefined) return n;
  }
  throw new LuaError(`attempt to perform arithmetic on a ${typeName(value)} value`);
}

export function add(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  return arithmetic(a) + arithmetic(b);
}
export function sub(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return arithmetic(a) - arithmetic(b);
}
export function mul(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a * b;
  return arithmetic(a) * arithmetic(b);
}
export function div(a: unknown, b: unknown): number {
  return arithmetic(a) / arithmetic(b);
}
/** Lua 5.1's `%`: `a - floor(a / b) * b`, the sign of the divisor. */
export function mod(a: unknown, b: unknown): number {
  const x = arithmetic(a);
  const y = arithmetic(b);
  return x - Math.floor(x / y) * y;
}
/**
 * `a ^ b`: C's pow, as glibc computes it, which is not JavaScript's Math.pow (10 ^ 26 is one unit apart). glibc's
 * result is within 0.52 units of the exact value, so for a whole exponent, worked out exactly here with BigInt, it
 * is the exact value rounded, unless that lies within 0.02 units of halfway between two doubles (glibc gives
 * 1.0000000000000001e+23 for 10 ^ 23, a tie that rounding to even takes down): those, a result below the normal
 * doubles, and powers with a fractional exponent (no exact value to start from) are refused, not guessed. C99 also
 * differs where 1 is raised to anything, and -1 to an infinity: both give 1.
 */
export function pow(a: unknown, b: unknown): number {
  const x = arithmetic(a);
  const y = arithmetic(b);
  if (x === 1 || (x === -1 && !Number.isFinite(y))) return 1;
  if (Number.isNaN(x) || Number.isNaN(y) || y === 0) return Math.pow(x, y);
  if (!Number.isFinite(x) || x === 0 || !Number.isFinite(y)) return Math.pow(x, y);
  if (!Number.isInteger(y))
    throw new UnsupportedLua("a power with a fractional exponent (glibc's pow and V8's differ)");
  const { mantissa, exponent } = decompose(Math.abs(x));
  const n = Math.abs(y);
  // Beyond this the power overflows or underflows whatever the mantissa, unless it is 1 (a power of two).
  if (n > 1100 && mantissa !== 1n) return Math.pow(x, y);
  const exact = mantissa ** BigInt(n);
  let value: number;
  if (y > 0) {
    value = rounded(exact, exponent * n);
  } else {
    // 1 / (exact * 2^(exponent * n)): a quotient of 64 bits or more, a remainder kept as its lowest bit.
    const precision = exact.toString(2).length + 64;
    const numerator = 1n << BigInt(precision);
    const quotient = (numerator / exact) | (numerator % exact ? 1n : 0n);
    value = rounded(quotient, -precision - exponent * n);
  }
  return x < 0 && n % 2 === 1 ? -value : value;
}

/** `significand * 2^scale` rounded to a double, or refused where glibc's pow may round it the other way. */
function rounded(significand: bigint, scale: number): number {
  const extra = significand.toString(2).length - 53;
  let top = significand;
  let shift = 0;
  if (extra > 0) {
    // Keep 64 bits, the lowest of them set if anything below is: the rounding then goes as the exact value's would.
    shift = Math.max(extra - 11, 0);
    top = (significand >> BigInt(shift)) | (significand & ((1n << BigInt(shift)) - 1n) ? 1n : 0n);
    const below = extra - shift;
    const low = Number(top & ((1n << BigInt(below)) - 1n)) / 2 ** below;
    if (Math.abs(low - 0.5) <= 0.02)
      throw new UnsupportedLua('a power within 0.02 units of a tie (glibc rounds it either way)');
  }
  const value = scaleByPowerOfTwo(Number(top), shift + scale);
  const powerOfTwo = (significand & (significand - 1n)) === 0n;
  if (value !== 0 && value < 2 ** -1022 && !powerOfTwo) throw new UnsupportedLua('a power below the normal doubles');
  return value;
}

/** `v * 2^k`, in steps that stay within the doubles' exponents (exact unless the result is subnormal). */
function scaleByPowerOfTwo(v: number, k: number): number {
  let result = v;
  let rest = k;
  while (rest > 1000) {
    result *= 2 ** 1000;
    rest -= 1000;
  }
  while (rest < -1000) {
    result *= 2 ** -1000;
    rest += 1000;
  }
  return result * 2 ** rest;
}

export function neg(a: unknown): number {
  return -arithmetic(a);
}

/** `a .. b`: strings and numbers (`%.14g`), nothing else. */
export function concat(a: unknown, b: unknown): string {
  return concatPart(a) + concatPart(b);
}
function concatPart(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return luaNumberString(value);
  throw new LuaError(`attempt to concatenate a ${typeName(value)} value`);
}

/** `a < b`: two numbers, or two strings (byte order, as strcoll in the C locale), else an error. */
export function lt(a: unknown, b: unknown): boolean {
  if ((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')) {
    return a < b;
  }
  throw compareError(a, b);
}
export function le(a: unknown, b: unknown): boolean {
  if ((typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string')) {
    return a <= b;
  }
  throw compareError(a, b);
}
function compareError(a: unknown, b: unknown): LuaError {
  const [x, y] = [typeName(a), typeName(b)];
  return new LuaError(x === y ? `attempt to compare two ${x} values` : `attempt to compare ${x} with ${y}`);
}

/** `#v`. */
export function length(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (value instanceof LuaTable) return value.length();
  throw new LuaError(`attempt to get length of a ${typeName(value)} value`);
}

/** `t[k]`. */
export function index(table: unknown, key: unknown): unknown {
  if (table instanceof LuaTable) return table.get(key);
  throw new LuaError(`attempt to index a ${typeName(table)} value`);
}

/** `t[k] = v`. */
export function setIndex(table: unknown, key: unknown, value: unknown): void {
  if (table instanceof LuaTable) table.set(key, value);
  else throw new LuaError(`attempt to index a ${typeName(table)} value`);
}

/** `f(...)`. */
export function call(fn: unknown, ...args: unknown[]): unknown {
  if (typeof fn === 'function') return fn(...args);
  throw new LuaError(`attempt to call a ${typeName(fn)} value`);
}

/** A numeric `for`'s start, limit or step. */
export function forNumber(value: unknown, what: string): number {
  if (typeof value === 'number') return value;
  const n = typeof value === 'string' ? stringToNumber(value) : undefined;
  if (n === undefined) throw new LuaError(`'for' ${what} must be a number`);
  return n;
}
