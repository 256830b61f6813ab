/**
 * The values and operators of Lua 5.1 (the Lua of Redis), for scripts compiled to JavaScript (compile.ts): nil is
 * `undefined`, booleans and numbers (doubles, as in 5.1) are JavaScript's, a string is a JavaScript string of one
 * character per byte, a table is a {@link LuaTable}. Every operator checks its operands' types as Lua does and raises a
 * {@link LuaError} where Lua raises an error (JavaScript would go on with `NaN` or `"undefined"`).
 */
import { luaNumberString } from './number-string.js';

/** A Lua runtime error: the script stops, and Redis answers with an error. */
export class LuaError extends Error {}

/** More than one value, as a call returns them (`return a, b`, `string.match` with two captures). */
export class LuaMulti extends Array<unknown> {}

/** A Lua table: the array part `1..n` in a JavaScript array, every other key in a map. */
export class LuaTable {
  readonly array: unknown[];
  private hash: Map<unknown, unknown> | undefined;

  constructor(array: unknown[] = []) {
    let n = array.length;
    while (n > 0 && array[n - 1] === undefined) n--;
    array.length = n;
    this.array = array;
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
          array[key - 1] = value;
          if (value === undefined && key === array.length) this.trim();
        } else if (value !== undefined) {
          array.push(value);
          this.migrate();
        }
        return;
      }
    }
    if (value === undefined) this.hash?.delete(key);
    else (this.hash ??= new Map()).set(key, value);
  }

  /** `#t`: a border, the array part's length here (as C Lua's for a table without holes). */
  length(): number {
    return this.array.length;
  }

  private trim(): void {
    const array = this.array;
    while (array.length > 0 && array[array.length - 1] === undefined) array.length--;
  }

  /** Keys `n+1, n+2, …` set before the array reached them move into it. */
  private migrate(): void {
    const hash = this.hash;
    if (hash === undefined) return;
    for (;;) {
      const key = this.array.length + 1;
      const value = hash.get(key);
      if (value === undefined) return;
      hash.delete(key);
      this.array.push(value);
    }
  }
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

/** Lua 5.1's conversion of a string to a number (`lua_str2number`: strtod, or a hexadecimal integer), else nil. */
export function stringToNumber(text: string): number | undefined {
  if (isDecimalInteger(text)) return Number(text);
  const trimmed = text.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');
  if (trimmed === '') return undefined;
  if (/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(trimmed)) return Number(trimmed);
  if (/^0[xX][0-9a-fA-F]+$/.test(trimmed)) return parseInt(trimmed.slice(2), 16);
  const special = /^([-+]?)(inf|infinity|nan)$/i.exec(trimmed);
  if (special !== null) {
    if (special[2].toLowerCase() === 'nan') return NaN;
    return special[1] === '-' ? -Infinity : Infinity;
  }
  return undefined;
}

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
