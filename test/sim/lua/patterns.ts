/**
 * Lua patterns as JavaScript regular expressions, for `string.match` and `string.gmatch` in compiled scripts. Lua's
 * matcher backtracks as JavaScript's does for the parts translated here: single-character classes (`.`, `%a`, sets)
 * with `*`, `+`, `-` (lazy) and `?`, captures (a position capture `()` as an empty group whose index is read back),
 * and the anchors `^` and `$`. What has no such translation (`%b`, `%f`,
 * back-references, an upper-case class inside a set other than `%D` and `%S`) is refused when
 * the pattern is first used, so a script that needs it fails loudly rather than matching differently.
 */
import { LuaError } from './runtime.js';
import { UnsupportedLua } from './unsupported.js';

const CLASSES: Record<string, string> = {
  a: 'A-Za-z',
  c: '\\x00-\\x1f\\x7f',
  d: '0-9',
  l: 'a-z',
  p: '!-\\/:-@\\[-`{-~',
  s: ' \\t\\n\\v\\f\\r',
  u: 'A-Z',
  w: 'A-Za-z0-9',
  x: '0-9A-Fa-f',
};

/** A translated pattern: its captures, and which of them (1-based) are positions. */
export interface CompiledPattern {
  anchored: RegExp;
  search: RegExp;
  captures: number;
  positions: number[];
}

const cache = new Map<string, CompiledPattern>();

/** The regular expressions for a pattern: one that matches from a given index on, one that searches (`g`). */
export function compilePattern(pattern: string): CompiledPattern {
  let compiled = cache.get(pattern);
  if (compiled === undefined) {
    const { source, captures, positions, anchoredAtStart } = translate(pattern);
    // `d`: the indices of the groups, for the position captures.
    const d = positions.length > 0 ? 'd' : '';
    compiled = {
      anchored: new RegExp(source, `y${d}`),
      search: new RegExp(source, `${anchoredAtStart ? 'y' : 'g'}${d}`),
      captures,
      positions,
    };
    cache.set(pattern, compiled);
  }
  return compiled;
}

function translate(pattern: string): {
  source: string;
  captures: number;
  positions: number[];
  anchoredAtStart: boolean;
} {
  let i = 0;
  let out = '';
  let captures = 0;
  const positions: number[] = [];
  let open = 0;
  const anchoredAtStart = pattern.startsWith('^');
  if (anchoredAtStart) i = 1;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === '(') {
      if (pattern[i + 1] === ')') {
        out += '()';
        positions.push(++captures);
        i += 2;
        continue;
      }
      out += '(';
      captures++;
      open++;
      i++;
      continue;
    }
    if (c === ')') {
      if (open === 0) throw new LuaError(`invalid pattern capture in '${pattern}'`);
      out += ')';
      open--;
      i++;
      continue;
    }
    if (c === '$' && i === pattern.length - 1) {
      out += '$';
      i++;
      continue;
    }
    let atom: string;
    if (c === '%') {
      const e = pattern[i + 1];
      if (e === undefined) throw new LuaError(`malformed pattern (ends with '%') in '${pattern}'`);
      if (e === 'b' || e === 'f' || (e >= '0' && e <= '9')) throw unsupported(pattern, `%${e}`);
      atom = classAtom(e, pattern);
      i += 2;
    } else if (c === '[') {
      const end = setEnd(pattern, i);
      atom = setAtom(pattern.slice(i + 1, end), pattern);
      i = end + 1;
    } else {
      atom = c === '.' ? '[\\s\\S]' : escapeLiteral(c);
      i++;
    }
    const q = pattern[i];
    if (q === '*' || q === '+' || q === '?') {
      atom += q;
      i++;
    } else if (q === '-') {
      atom += '*?';
      i++;
    }
    out += atom;
  }
  if (open !== 0) throw new LuaError(`unfinished capture in '${pattern}'`);
  return { source: out, captures, positions, anchoredAtStart };
}

function classAtom(e: string, pattern: string): string {
  const range = CLASSES[e];
  if (range !== undefined) return `[${range}]`;
  const lower = CLASSES[e.toLowerCase()];
  if (lower !== undefined) return `[^${lower}]`;
  if (/[A-Za-z0-9]/.test(e)) throw unsupported(pattern, `%${e}`);
  return escapeLiteral(e);
}

/** The index of the `]` that closes the set opening at `start` (a `]` first in the set is a literal one). */
function setEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '%' ? 2 : 1;
  if (i >= pattern.length) throw new LuaError(`malformed pattern (missing ']') in '${pattern}'`);
  return i;
}

function setAtom(body: string, pattern: string): string {
  let i = 0;
  let out = '';
  if (body[0] === '^') {
    out = '^';
    i = 1;
  }
  while (i < body.length) {
    const c = body[i];
    if (c === '%') {
      const e = body[i + 1];
      const range = CLASSES[e];
      if (range !== undefined) out += range;
      else if (e === 'D') out += '\\D';
      else if (e === 'S') out += '\\S';
      else if (/[A-Za-z0-9]/.test(e)) throw unsupported(pattern, `%${e} in a set`);
      else out += escapeInSet(e);
      i += 2;
    } else if (body[i + 1] === '-' && i + 2 < body.length) {
      out += `${escapeInSet(c)}-${escapeInSet(body[i + 2])}`;
      i += 3;
    } else {
      out += escapeInSet(c);
      i++;
    }
  }
  return `[${out}]`;
}

function escapeLiteral(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

function escapeInSet(c: string): string {
  return /[\\\]^-]/.test(c) ? `\\${c}` : c;
}

function unsupported(pattern: string, what: string): UnsupportedLua {
  return new UnsupportedLua(`pattern '${pattern}': ${what} is not supported by the simulator's compiled scripts`);
}
