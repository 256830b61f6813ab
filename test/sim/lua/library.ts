/**
 * The part of Lua 5.1's standard library that compiled scripts may call, as Redis's Lua provides it. A script that
 * calls anything else fails to compile (compile.ts), so nothing runs with a guessed meaning.
 */
import { luaNumberString } from './number-string.js';
import { compilePattern } from './patterns.js';
import { arithmetic, LuaError, LuaMulti, LuaTable, stringToNumber, typeName } from './runtime.js';

function tonumber(value: unknown, base?: unknown): number | undefined {
  if (base !== undefined && base !== 10) {
    const radix = arithmetic(base);
    const text = String(typeof value === 'number' ? luaNumberString(value) : value)
      .trim()
      .toLowerCase();
    if (!Number.isInteger(radix) || radix < 2 || radix > 36) throw new LuaError("bad argument #2 to 'tonumber'");
    const digits = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, radix);
    if (text === '' || [...text].some((c) => !digits.includes(c))) return undefined;
    return parseInt(text, radix);
  }
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return stringToNumber(value);
  return undefined;
}

function tostring(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return luaNumberString(value);
  if (value === undefined) return 'nil';
  if (typeof value === 'boolean') return String(value);
  throw new LuaError(`tostring of a ${typeName(value)} value is not supported by the simulator's compiled scripts`);
}

/** A string argument: strings, and numbers as `%.14g` (Lua coerces). */
function stringArgument(value: unknown, position: number, name: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return luaNumberString(value);
  throw new LuaError(`bad argument #${position} to '${name}' (string expected, got ${typeName(value)})`);
}

function integerArgument(value: unknown, fallback: number): number {
  return value === undefined ? fallback : Math.trunc(arithmetic(value));
}

function sub(value: unknown, from?: unknown, to?: unknown): string {
  const s = stringArgument(value, 1, 'sub');
  const n = s.length;
  let i = integerArgument(from, 1);
  let j = integerArgument(to, -1);
  if (i < 0) i = Math.max(n + i + 1, 1);
  else if (i === 0) i = 1;
  if (j < 0) j = n + j + 1;
  else if (j > n) j = n;
  return i > j ? '' : s.slice(i - 1, j);
}

/** A match's captures (or the whole match) as a call's values. */
function matchValues(match: RegExpExecArray, captures: number): unknown {
  if (captures === 0) return match[0];
  if (captures === 1) return match[1];
  const values = new LuaMulti();
  for (let k = 1; k <= captures; k++) values.push(match[k]);
  return values;
}

function match(value: unknown, pattern: unknown, init?: unknown): unknown {
  const s = stringArgument(value, 1, 'match');
  const compiled = compilePattern(stringArgument(pattern, 2, 'match'));
  let start = integerArgument(init, 1);
  if (start < 0) start = Math.max(s.length + start + 1, 1);
  else if (start === 0) start = 1;
  if (start > s.length + 1) return undefined;
  const regex = compiled.search;
  regex.lastIndex = start - 1;
  const found = regex.exec(s);
  return found === null ? undefined : matchValues(found, compiled.captures);
}

function gmatch(value: unknown, pattern: unknown): () => unknown {
  const s = stringArgument(value, 1, 'gmatch');
  const text = stringArgument(pattern, 2, 'gmatch');
  // In Lua 5.1's gmatch a leading `^` is an ordinary character, not an anchor.
  const compiled = compilePattern(text.startsWith('^') ? `%^${text.slice(1)}` : text);
  const regex = new RegExp(compiled.search.source, 'g');
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
    return matchValues(found, compiled.captures);
  };
}

function numbers(args: unknown[], name: string): number[] {
  if (args.length === 0) throw new LuaError(`bad argument #1 to '${name}' (number expected, got no value)`);
  return args.map(arithmetic);
}

/** The globals a compiled script may read, by name; members by `<table>.<name>`. */
export const LIBRARY: Record<string, unknown> = {
  tonumber,
  tostring,
  type: typeName,
  'math.floor': (x: unknown) => Math.floor(arithmetic(x)),
  'math.ceil': (x: unknown) => Math.ceil(arithmetic(x)),
  'math.abs': (x: unknown) => Math.abs(arithmetic(x)),
  'math.max': (...args: unknown[]) => Math.max(...numbers(args, 'max')),
  'math.min': (...args: unknown[]) => Math.min(...numbers(args, 'min')),
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
