/**
 * The values and operators of Lua 5.1 (the Lua of Redis), for scripts compiled to JavaScript (compile.ts): nil is
 * `undefined`, booleans and numbers (doubles, as in 5.1) are JavaScript's, a string is a JavaScript string of one
 * character per byte, a table is a {@link LuaTable}. Every operator checks its operands' types as Lua does and raises a
 * {@link LuaError} where Lua raises an error (JavaScript would go on with `NaN` or `"undefined"`).
 */
import { luaNumberString } from './number-string.js';
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
