/**
 * The part of Lua 5.1's standard library that compiled scripts may call, as Redis's Lua provides it. A script that
 * calls anything else fails to compile (compile.ts), so nothing runs with a guessed meaning.
 */
import { luaNumberString } from './number-string.js';
import { compilePattern, type CompiledPattern } from './patterns.js';
import { UnsupportedLua } from './unsupported.js';
import { arithmetic, LuaError, LuaMulti, LuaTable, stringToNumber, typeName } from './runtime.js';

/** The first argument of a function that takes any value, nil too, but not none (`type()`, `type(f())`). */
function anyArgument(args: unknown[], name: string): unknown {
  if (args.length === 0) throw new LuaError(`bad argument #1 to '${name}' (value expected)`);
  return args[0];
}

function tonumber(...args: unknown[]): number | undefined {
  const [value, base] = [anyArgument(args, 'tonumber'), args[1]];
  const radix = base === undefined ? 10 : integerArgument(base, 2, 'tonumber');
  if (radix === 10) {
    if (typeof value === 'number') return value;
    if (typeof value === 'string') return stringToNumber(value);
    return undefined;
  }
  const text = stringArgument(value, 1, 'tonumber');
  if (radix < 2 || radix > 36) throw new LuaError("bad argument #2 to 'tonumber' (base out of range)");
  return stringToUnsigned(text, radix);
}

/**
 * `tonumber(s, base)` as Lua 5.1 does it, with C's strtoul: optional spaces, an optional sign, for base 16 an
 * optional `0x`, at least one digit, optional spaces. The value is an unsigned long: a negative one wraps round
 * (`tonumber("-1", 2)` is 2^64 - 1) and one too large is 2^64 - 1; then it becomes a double.
 */
function stringToUnsigned(text: string, radix: number): number | undefined {
  const found = /^[ \t\n\v\f\r]*([-+]?)(0[xX])?([0-9A-Za-z]*)[ \t\n\v\f\r]*$/.exec(text);
  if (found === null) return undefined;
  const [, sign, prefix, digits] = found;
  // The `0x` is the base's prefix only for base 16 (and then needs digits after it); in another base it is digits.
  const body = radix === 16 ? digits : (prefix ?? '') + digits;
  if (body === '') return undefined;
  let n = 0n;
  for (const c of body.toLowerCase()) {
    const digit = parseInt(c, 36);
    if (digit >= radix) return undefined;
    n = n * BigInt(radix) + BigInt(digit);
  }
  const max = 2n ** 64n - 1n;
  if (n > max) n = max;
  else if (sign === '-' && n !== 0n) n = max + 1n - n;
  return Number(n);
}

function tostring(...args: unknown[]): string {
  const value = anyArgument(args, 'tostring');
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return luaNumberString(value);
  if (value === undefined) return 'nil';
  if (typeof value === 'boolean') return String(value);
  // Lua prints the table's or the function's address.
  throw new UnsupportedLua(`tostring of a ${typeName(value)} value`);
}

/** A string argument: strings, and numbers as `%.14g` (Lua coerces). */
function stringArgument(value: unknown, position: number, name: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return luaNumberString(value);
  throw new LuaError(`bad argument #${position} to '${name}' (string expected, got ${typeName(value)})`);
}

/**
 * An integer argument (`luaL_checkinteger`, or `luaL_optinteger` with a fallback): a number or a numeric string, cast
 * as C casts a double to an integer on x86-64 (truncated; NaN, the infinities and what is out of range become the
 * lowest integer, so `string.sub(s, 1, math.huge)` is empty).
 */
function integerArgument(value: unknown, position: number, name: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback !== undefined) return fallback;
    throw new LuaError(`bad argument #${position} to '${name}' (number expected, got no value)`);
  }
  const n = arithmetic(value);
  return n >= -(2 ** 63) && n < 2 ** 63 ? Math.trunc(n) : -(2 ** 63);
}

function sub(value: unknown, from?: unknown, to?: unknown): string {
  const s = stringArgument(value, 1, 'sub');
  const n = s.length;
  let i = integerArgument(from, 2, 'sub');
  let j = integerArgument(to, 3, 'sub', -1);
  if (i < 0) i = Math.max(n + i + 1, 1);
  else if (i === 0) i = 1;
  if (j < 0) j = n + j + 1;
  else if (j > n) j = n;
  return i > j ? '' : s.slice(i - 1, j);
}

/** A match's captures (or the whole match) as a call's values; a position capture as the 1-based index. */
function matchValues(match: RegExpExecArray, compiled: CompiledPattern): unknown {
  const { captures, positions } = compiled;
  if (captures === 0) return match[0];
  // A position capture is an empty group, which always takes part in the match: its indices are there.
  const capture = (k: number): unknown => (positions.includes(k) ? match.indices![k]![0] + 1 : match[k]);
  if (captures === 1) return capture(1);
  const values = new LuaMulti();
  for (let k = 1; k <= captures; k++) values.push(capture(k));
  return values;
}

function match(value: unknown, pattern: unknown, init?: unknown): unknown {
  const s = stringArgument(value, 1, 'match');
  const compiled = compilePattern(stringArgument(pattern, 2, 'match'));
  let start = integerArgument(init, 3, 'match', 1);
  if (start < 0) start = Math.max(s.length + start + 1, 1);
  else if (start === 0) start = 1;
  // Lua 5.1 starts a start beyond the end at the end (5.2 answers nil).
  else if (start > s.length + 1) start = s.length + 1;
  const regex = compiled.search;
  regex.lastIndex = start - 1;
  const found = regex.exec(s);
  return found === null ? undefined : matchValues(found, compiled);
}

function gmatch(value: unknown, pattern: unknown): () => unknown {
  const s = stringArgument(value, 1, 'gmatch');
  const text = stringArgument(pattern, 2, 'gmatch');
  // In Lua 5.1's gmatch a leading `^` is an ordinary character, not an anchor.
  const compiled = compilePattern(text.startsWith('^') ? `%^${text.slice(1)}` : text);
  const regex = new RegExp(compiled.search.source, compiled.positions.length > 0 ? 'gd' : 'g');
  let position = 0;
  return () => {
    if (position > s.length) return undefined;
    regex.lastIndex = position;
    const found = regex.exec(s);
    if (found === null) {
      position = s.length + 1;
      return undefined;
    }
    const end = found.index + found[0].length;
    position = end === found.index ? end + 1 : end;
    return matchValues(found, compiled);
  };
}

/**
 * `math.max` and `math.min` as Lua 5.1 runs them: the first argument, replaced by each later one that compares
 * greater (or less). Not JavaScript's: a NaN first stays, a later NaN is passed over, and of 0 and -0 the first stays.
 */
function extreme(args: unknown[], name: string, better: (x: number, best: number) => boolean): number {
  if (args.length === 0) throw new LuaError(`bad argument #1 to '${name}' (number expected, got no value)`);
  let best = arithmetic(args[0]);
  for (let k = 1; k < args.length; k++) {
    const x = arithmetic(args[k]);
    if (better(x, best)) best = x;
  }
  return best;
}

/** The globals a compiled script may read, by name; members by `<table>.<name>`. */
export const LIBRARY: Record<string, unknown> = {
  tonumber,
  tostring,
  type: (...args: unknown[]) => typeName(anyArgument(args, 'type')),
  'math.floor': (x: unknown) => Math.floor(arithmetic(x)),
  'math.ceil': (x: unknown) => Math.ceil(arithmetic(x)),
  'math.abs': (x: unknown) => Math.abs(arithmetic(x)),
  'math.max': (...args: unknown[]) => extreme(args, 'max', (x, best) => x > best),
  'math.min': (...args: unknown[]) => extreme(args, 'min', (x, best) => x < best),
  'math.huge': Infinity,
  'string.sub': sub,
  'string.len': (s: unknown) => stringArgument(s, 1, 'len').length,
  'string.match': match,
  'string.gmatch': gmatch,
  'table.getn': (t: unknown) => {
    if (t instanceof LuaTable) return t.length();
    throw new LuaError(`bad argument #1 to 'getn' (table expected, got ${typeName(t)})`);
  },
};
