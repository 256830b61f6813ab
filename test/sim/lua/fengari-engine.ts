/**
 * The reference engine for the simulator's scripts: fengari, a Lua 5.3 VM in JavaScript, made to behave as Redis's Lua
 * 5.1 does for what the scripts use. Redis's numbers are all doubles; fengari's integers are 32 bits and wrap, and Lua
 * 5.3 prints a float as `3.0`. So `tonumber` always yields a float (a double, as in 5.1), `tostring` prints a number
 * as 5.1 does (`%.14g`), and a number passed to `redis.call` is turned into a string the same way. Integer literals of
 * a script stay 5.3 integers; every value the scripts compute with comes from `tonumber` or `TIME`, so arithmetic is
 * on doubles. The remaining difference is `..` on a number (Lua 5.3 appends `.0` to a whole float): the scripts use
 * it only to build a score bound (`'(' .. now`), which parses to the same number either way.
 *
 * The simulator runs the scripts compiled to JavaScript (compiled-engine.ts); this one is chosen with `SIM_LUA=fengari`,
 * and the tests compare both.
 */
import fengari from 'fengari';
import fengariDo from 'fengari/src/ldo.js';
import fengariObject from 'fengari/src/lobject.js';
import fengariString from 'fengari/src/lstring.js';
import fengariState from 'fengari/src/lstate.js';
import { RedisError, type CommandServer, type Reply, type ScriptEngine } from '../redis-reply.js';
import { clientArgumentString, luaNumberString, redisArgumentString } from './number-string.js';
import { MAX_REPLY_DEPTH, UnsupportedLua } from './unsupported.js';

const { lua, lauxlib, lualib, to_luastring, to_jsstring } = fengari as unknown as FengariModule;

/**
 * One Lua state for every model in this process: the scripts are compiled once and kept by reference, and a script
 * runs against the model that called it (`redis.call` goes to {@link FengariEngine.model}). Sharing is safe because a
 * script runs to its end synchronously and Redis scripts keep no globals of their own (KEYS and ARGV are set anew on
 * every run). Building a state and compiling the four scripts cost more than a whole schedule's other work.
 */
export class FengariEngine implements ScriptEngine {
  private readonly L: LuaState;
  private readonly compiled = new Map<string, number>();
  private model: CommandServer | undefined;

  constructor() {
    if (stock === undefined) tuneFengari();
    this.L = this.newVm();
  }

  run(model: CommandServer, script: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const L = this.L;
    let ref = this.compiled.get(script);
    if (ref === undefined) {
      if (lauxlib.luaL_loadstring(L, to_luastring(script)) !== lua.LUA_OK) {
        const error = jsString(lua.lua_tostring(L, -1));
        lua.lua_pop(L, 1);
        throw new RedisError(`ERR Error compiling script: ${error}`);
      }
      ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
      this.compiled.set(script, ref);
    }
    this.setArray(KEYS_NAME, keys);
    this.setArray(ARGV_NAME, args);
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
    this.model = model;
    let status: number;
    try {
      status = lua.lua_pcall(L, 0, 1, 0);
    } finally {
      this.model = undefined;
    }
    if (status !== lua.LUA_OK) {
      const error = lua.lua_isstring(L, -1) ? jsString(lua.lua_tostring(L, -1)) : 'error';
      lua.lua_pop(L, 1);
      throw new RedisError(`ERR Error running script: ${error}`);
    }
    const top = lua.lua_gettop(L) - 1;
    let reply: Reply | RedisError;
    try {
      reply = this.fromLua(-1);
    } finally {
      lua.lua_settop(L, top);
    }
    if (reply instanceof RedisError) throw reply;
    return reply;
  }

  private newVm(): LuaState {
    const L = lauxlib.luaL_newstate();
    lualib.luaL_openlibs(L);
    // Lua 5.1's numbers are doubles: `tonumber` never yields a (32-bit, wrapping) fengari integer.
    lua.lua_getglobal(L, to_luastring('tonumber'));
    const tonumberRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    lua.lua_pushjsfunction(L, (state: LuaState) => {
      const n = lua.lua_gettop(state);
      // The scripts' usual case, a decimal integer of a key's value or an argument, read here without fengari's
      // conversion to a JavaScript string and its parser. Leading zeros and "-0" go the long way (Lua reads "-0" as 0).
      if (n === 1 && lua.lua_type(state, 1) === lua.LUA_TSTRING) {
        const text = jsString(lua.lua_tostring(state, 1));
        if (DECIMAL_INTEGER.test(text)) {
          lua.lua_pushnumber(state, Number(text));
          return 1;
        }
      }
      lua.lua_rawgeti(state, lua.LUA_REGISTRYINDEX, tonumberRef);
      for (let i = 1; i <= n; i++) lua.lua_pushvalue(state, i);
      lua.lua_call(state, n, 1);
      if (lua.lua_type(state, -1) === lua.LUA_TNUMBER) {
        const value = lua.lua_tonumber(state, -1);
        lua.lua_pop(state, 1);
        lua.lua_pushnumber(state, value);
      }
      return 1;
    });
    lua.lua_setglobal(L, to_luastring('tonumber'));
    // …and print as 5.1 prints them (`%.14g`, no `.0`).
    lua.lua_getglobal(L, to_luastring('tostring'));
    const tostringRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    lua.lua_pushjsfunction(L, (state: LuaState) => {
      if (lua.lua_type(state, 1) === lua.LUA_TNUMBER) {
        pushString(state, luaNumberString(lua.lua_tonumber(state, 1)));
        return 1;
      }
      lua.lua_rawgeti(state, lua.LUA_REGISTRYINDEX, tostringRef);
      lua.lua_pushvalue(state, 1);
      lua.lua_call(state, 1, 1);
      return 1;
    });
    lua.lua_setglobal(L, to_luastring('tostring'));
    lua.lua_newtable(L);
    lua.lua_pushjsfunction(L, (state: LuaState) => this.luaCall(state));
    lua.lua_setfield(L, -2, to_luastring('call'));
    lua.lua_setglobal(L, to_luastring('redis'));
    return L;
  }

  /** `redis.call(...)`: the arguments as Redis converts them, the reply as Redis hands it to Lua. */
  private luaCall(L: LuaState): number {
    const n = lua.lua_gettop(L);
    const args: string[] = [];
    for (let i = 1; i <= n; i++) {
      const type = lua.lua_type(L, i);
      if (type === lua.LUA_TNUMBER) args.push(redisArgumentString(lua.lua_tonumber(L, i)));
      else if (type === lua.LUA_TSTRING) args.push(jsString(lua.lua_tostring(L, i)));
      else return lauxlib.luaL_error(L, to_luastring('Lua redis() command arguments must be strings or integers'));
    }
    let reply: Reply;
    try {
      reply = this.model!.command(args);
    } catch (error) {
      return lauxlib.luaL_error(L, to_luastring(error instanceof Error ? error.message : String(error)));
    }
    this.toLua(L, reply);
    return 1;
  }

  private toLua(L: LuaState, reply: Reply): void {
    if (reply === null) lua.lua_pushboolean(L, false);
    else if (typeof reply === 'number') lua.lua_pushnumber(L, reply);
    else if (typeof reply === 'string') pushString(L, reply);
    else if (Array.isArray(reply)) {
      lua.lua_createtable(L, reply.length, 0);
      for (let i = 0; i < reply.length; i++) {
        this.toLua(L, reply[i]);
        lua.lua_rawseti(L, -2, i + 1);
      }
    } else {
      lua.lua_createtable(L, 0, 1);
      pushString(L, reply.status);
      lua.lua_setfield(L, -2, OK_NAME);
    }
  }

  /** A script's return value as a Redis reply: numbers truncated to integers, arrays up to the first nil. */
  private fromLua(index: number, depth = 0): Reply | RedisError {
    const L = this.L;
    const type = lua.lua_type(L, index);
    if (type === lua.LUA_TNUMBER) return Math.trunc(lua.lua_tonumber(L, index));
    if (type === lua.LUA_TSTRING) return jsString(lua.lua_tostring(L, index));
    if (type === lua.LUA_TBOOLEAN) return lua.lua_toboolean(L, index) ? 1 : null;
    if (type !== lua.LUA_TTABLE) return null;
    // redis-server answers a table that holds itself with an error nested in the arrays it had begun (see
    // compiled-engine.ts): not a reply this model can hold.
    if (depth > MAX_REPLY_DEPTH) throw new UnsupportedLua(`a reply of tables nested more than ${MAX_REPLY_DEPTH} deep`);
    // Room for this level's item and field, as redis-server makes before it reads a table.
    lua.lua_checkstack(L, 4);
    const at = lua.lua_absindex(L, index);
    lua.lua_getfield(L, at, ERR_NAME);
    if (lua.lua_type(L, -1) === lua.LUA_TSTRING) {
      const error = new RedisError(jsString(lua.lua_tostring(L, -1)));
      lua.lua_pop(L, 1);
      return error;
    }
    lua.lua_pop(L, 1);
    lua.lua_getfield(L, at, OK_NAME);
    if (lua.lua_type(L, -1) === lua.LUA_TSTRING) {
      const status = jsString(lua.lua_tostring(L, -1));
      lua.lua_pop(L, 1);
      return { status };
    }
    lua.lua_pop(L, 1);
    const out: Reply[] = [];
    for (let i = 1; ; i++) {
      lua.lua_rawgeti(L, at, i);
      if (lua.lua_type(L, -1) === lua.LUA_TNIL) {
        lua.lua_pop(L, 1);
        break;
      }
      const item = this.fromLua(-1, depth + 1);
      lua.lua_pop(L, 1);
      if (item instanceof RedisError) return item;
      out.push(item);
    }
    return out;
  }

  private setArray(name: Uint8Array, values: readonly (string | number)[]): void {
    const L = this.L;
    lua.lua_createtable(L, values.length, 0);
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      pushString(L, typeof value === 'number' ? clientArgumentString(value) : value);
      lua.lua_rawseti(L, -2, i + 1);
    }
    lua.lua_setglobal(L, name);
  }
}

/**
 * Two of fengari's stack routines, made to work as C Lua's do, for speed (together they were a third of a script's
 * time):
 * - fengari allocates a call frame for every call and drops it on return; C Lua keeps the frame below for the next
 *   call at that depth. Here each frame keeps the one it last called (`spare`) and the next call at that depth reuses
 *   it; luaD_precall sets every field a frame is read by, as in C.
 * - fengari shrinks the stack with `delete`, which turns V8's array into a slow sparse one; here a freed slot is set
 *   to `undefined`, which reads the same (every push stores a new value object).
 * Only calls through the modules' exports see these (the VM loop's and luaD_precall's). Scripts run with them in the
 * model-equivalence test against a real redis-server, and the Lua state is only ever used from one thread.
 */
export function tuneFengari(on = true): void {
  const ldo = fengariDo as unknown as FengariInternals['ldo'];
  const state = fengariState as unknown as FengariInternals['lstate'];
  const { TValue } = fengariObject as unknown as FengariInternals['lobject'];
  stock ??= { extendCI: state.luaE_extendCI, adjustTop: ldo.adjust_top };
  if (!on) {
    state.luaE_extendCI = stock.extendCI;
    ldo.adjust_top = stock.adjustTop;
    return;
  }
  state.luaE_extendCI = (L) => {
    const caller = L.ci;
    let ci = caller.spare;
    if (ci === undefined) {
      ci = new state.CallInfo();
      caller.spare = ci;
    }
    caller.next = ci;
    ci.previous = caller;
    ci.next = null;
    L.ci = ci;
    return ci;
  };
  ldo.adjust_top = (L, newtop) => {
    const stack = L.stack;
    let top = L.top;
    while (top < newtop) stack[top++] = new TValue(0, null);
    while (top > newtop) stack[--top] = undefined;
    L.top = top;
  };
}

/** Fengari's own routines, to put back (`tuneFengari(false)`, for the test that compares both). */
let stock:
  | { extendCI: FengariInternals['lstate']['luaE_extendCI']; adjustTop: FengariInternals['ldo']['adjust_top'] }
  | undefined;

interface FengariCallInfo {
  previous: FengariCallInfo | null;
  next: FengariCallInfo | null;
  spare?: FengariCallInfo;
}
interface FengariStackState {
  ci: FengariCallInfo;
  stack: unknown[];
  top: number;
}
interface FengariInternals {
  lstate: { CallInfo: new () => FengariCallInfo; luaE_extendCI: (L: FengariStackState) => FengariCallInfo };
  ldo: { adjust_top: (L: FengariStackState, newtop: number) => void };
  lobject: {
    TValue: new (type: number, value: unknown) => unknown;
    pushsvalue2s(L: LuaState, ts: FengariTString): void;
  };
  lstring: { luaS_bless(L: LuaState, bytes: Uint8Array): FengariTString };
}
type FengariTString = { readonly __tstring: unique symbol };

/** A decimal integer that a double holds exactly, without leading zeros. */
const DECIMAL_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

const KEYS_NAME = to_luastring('KEYS');
const ARGV_NAME = to_luastring('ARGV');
const OK_NAME = to_luastring('ok');
const ERR_NAME = to_luastring('err');

/**
 * JavaScript strings to Lua strings, kept: the same keys, tokens and numbers cross into Lua thousands of times per
 * schedule. `lua_pushstring` copies the bytes it is handed into a new Lua string object every time; a Lua string is
 * immutable and shared by reference inside the VM (as in C Lua, where a string is interned), so one object per text
 * is pushed as it is. Its bytes are remembered with their text, so that the text is not decoded again when the
 * script hands them back (a key, a token, an argument).
 */
const luaStrings = new Map<string, FengariTString>();
function pushString(L: LuaState, text: string): void {
  let ts = luaStrings.get(text);
  if (ts === undefined) {
    if (luaStrings.size >= 50_000) luaStrings.clear();
    const bytes = to_luastring(text);
    ts = luaS_bless(L, bytes);
    luaStrings.set(text, ts);
    jsStrings.set(bytes, text);
  }
  pushsvalue2s(L, ts);
}

const { luaS_bless } = fengariString as unknown as FengariInternals['lstring'];
const { pushsvalue2s } = fengariObject as unknown as FengariInternals['lobject'];

/** The text of Lua strings seen before (pushed from JavaScript, or decoded once), by their bytes' identity. */
const jsStrings = new WeakMap<Uint8Array, string>();

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Lua strings to JavaScript: ASCII (all the scripts' keys and values) in one call, anything else as UTF-8. */
function jsString(bytes: Uint8Array): string {
  const known = jsStrings.get(bytes);
  if (known !== undefined) return known;
  const text = decode(bytes);
  jsStrings.set(bytes, text);
  return text;
}

function decode(bytes: Uint8Array): string {
  if (bytes.length <= 256) {
    let ascii = true;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return String.fromCharCode.apply(null, bytes as unknown as number[]);
  }
  try {
    return utf8.decode(bytes);
  } catch {
    return to_jsstring(bytes);
  }
}

// ---- fengari's API, as far as this file uses it (the package ships no types) ------------------------------------

type LuaState = { readonly __lua: unique symbol };
interface FengariModule {
  lua: {
    LUA_OK: number;
    LUA_REGISTRYINDEX: number;
    LUA_TNIL: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TBOOLEAN: number;
    LUA_TTABLE: number;
    lua_gettop(L: LuaState): number;
    lua_settop(L: LuaState, index: number): void;
    lua_checkstack(L: LuaState, n: number): boolean;
    lua_type(L: LuaState, i: number): number;
    lua_tonumber(L: LuaState, i: number): number;
    lua_tostring(L: LuaState, i: number): Uint8Array;
    lua_toboolean(L: LuaState, i: number): boolean;
    lua_isstring(L: LuaState, i: number): boolean;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushstring(L: LuaState, s: Uint8Array): void;
    lua_pushboolean(L: LuaState, b: boolean): void;
    lua_pushvalue(L: LuaState, i: number): void;
    lua_pushjsfunction(L: LuaState, fn: (L: LuaState) => number): void;
    lua_pop(L: LuaState, n: number): void;
    lua_call(L: LuaState, nargs: number, nresults: number): void;
    lua_pcall(L: LuaState, nargs: number, nresults: number, handler: number): number;
    lua_getglobal(L: LuaState, name: Uint8Array): number;
    lua_setglobal(L: LuaState, name: Uint8Array): void;
    lua_getfield(L: LuaState, i: number, name: Uint8Array): number;
    lua_setfield(L: LuaState, i: number, name: Uint8Array): void;
    lua_newtable(L: LuaState): void;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_rawgeti(L: LuaState, i: number, n: number): number;
    lua_rawseti(L: LuaState, i: number, n: number): void;
    lua_absindex(L: LuaState, i: number): number;
  };
  lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadstring(L: LuaState, s: Uint8Array): number;
    luaL_ref(L: LuaState, t: number): number;
    luaL_error(L: LuaState, message: Uint8Array): number;
  };
  lualib: { luaL_openlibs(L: LuaState): void };
  to_luastring(s: string): Uint8Array;
  to_jsstring(s: Uint8Array): string;
}
