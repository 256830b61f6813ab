/**
 * A Redis server in memory that runs the lease's own Lua scripts, for the simulator: a keyspace of strings, hashes and
 * sorted sets, a server clock, a `run_id` and a replication ID, and the faults the lease must survive (restart empty or
 * from a snapshot, FLUSHALL, deletion of any keys, a rollback in the same process).
 *
 * The scripts run in fengari, a Lua 5.3 VM in JavaScript; Redis runs Lua 5.1, whose numbers are all doubles. Fengari's
 * integers are 32 bits and wrap, and Lua 5.3 prints a float as `3.0`, so the VM is made to behave as 5.1 does for what
 * the scripts use: `tonumber` always yields a float (a double, as in 5.1), `tostring` prints a number as 5.1 does
 * (`%.14g`), and a number passed to `redis.call` is turned into a string the same way. Integer literals of a script
 * stay 5.3 integers; every value the scripts compute with comes from `tonumber` or `TIME`, so arithmetic is on doubles.
 * The remaining difference is `..` on a number (Lua 5.3 appends `.0` to a whole float): the scripts use it only to
 * build a score bound (`'(' .. now`), which parses to the same number either way.
 *
 * Only the commands the scripts call are modelled (see {@link RedisModel.command}); key expiry (EXPIRE) and eviction
 * policies are not: eviction is modelled as the deletion of keys, which the simulator chooses.
 */
import fengari from 'fengari';
import fengariDo from 'fengari/src/ldo.js';
import fengariObject from 'fengari/src/lobject.js';
import fengariString from 'fengari/src/lstring.js';
import fengariState from 'fengari/src/lstate.js';
import { mulberry32 } from '../support/seeded-random.js';

const { lua, lauxlib, lualib, to_luastring, to_jsstring } = fengari as unknown as FengariModule;

type Value =
  | { type: 'string'; value: string }
  | { type: 'hash'; value: Map<string, string> }
  | { type: 'zset'; value: Map<string, number> };

/** What a command or a script replies, as ioredis hands it over: numbers, strings, null, arrays. */
export type Reply = number | string | null | Reply[] | { status: string };

/** A copy of the keyspace, to restart from or roll back to. */
export interface Snapshot {
  readonly data: ReadonlyMap<string, Value>;
}

export class RedisError extends Error {}

/** A Redis process's identity as the scripts read it (`INFO`). */
export interface NodeIdentity {
  readonly runId: string;
  readonly replId: string;
}

/** Lua 5.1's `%.14g` for a number, as Redis prints a Lua number it receives as an argument. */
export function luaNumberString(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  if (Number.isInteger(n) && Math.abs(n) < 1e14) return String(n);
  const exponent = Math.floor(Math.log10(Math.abs(n)));
  if (exponent < -4 || exponent >= 14) {
    const [mantissa, exp] = n.toExponential(13).split('e');
    const trimmed = mantissa.includes('.') ? mantissa.replace(/0+$/, '').replace(/\.$/, '') : mantissa;
    const e = Number(exp);
    return `${trimmed}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  }
  const fixed = n.toPrecision(14);
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}

/** A score as Redis (7.0) prints it in a reply: `%.17g`, which for a whole number below 2^53 is its digits. */
function scoreString(score: number): string {
  if (score === Infinity) return 'inf';
  if (score === -Infinity) return '-inf';
  if (Number.isInteger(score)) return String(score);
  return String(Number(score.toPrecision(17)));
}

function parseScore(text: string): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  const n = Number(text);
  if (text.trim() === '' || Number.isNaN(n)) throw new RedisError('ERR value is not a valid float');
  return n;
}

function parseRange(text: string): { value: number; exclusive: boolean } {
  if (text.startsWith('(')) return { value: parseScore(text.slice(1)), exclusive: true };
  return { value: parseScore(text), exclusive: false };
}

function parseInteger(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new RedisError('ERR value is not an integer or out of range');
  return Number(text);
}

function randomHex(next: () => number): string {
  let out = '';
  for (let i = 0; i < 40; i++) out += Math.floor(next() * 16).toString(16);
  return out;
}

function copyValue(value: Value): Value {
  if (value.type === 'string') return { type: 'string', value: value.value };
  if (value.type === 'hash') return { type: 'hash', value: new Map(value.value) };
  return { type: 'zset', value: new Map(value.value) };
}

export class RedisModel {
  private data = new Map<string, Value>();
  /** When each key was last read or written, in commands run (for eviction in LRU order). */
  private readonly usedAt = new Map<string, number>();
  runId: string;
  replId: string;
  /** Server clock minus the simulation's true time (ms); the server's `TIME` is `trueNow() + clockOffsetMs`. */
  clockOffsetMs = 0;
  /** Microseconds within the millisecond that `TIME` reports (Redis reports real microseconds; 0 keeps it exact). */
  private readonly random: () => number;
  private readonly vm: ScriptVm;
  /** Scripts run, by name, and commands they called. */
  readonly counts = { scripts: 0, commands: 0 };
  /** Raised by every change of the keyspace, so that a snapshot of an unchanged keyspace is the last one again. */
  private version = 0;
  private lastSnapshot: { version: number; snapshot: Snapshot } | undefined;

  constructor(
    private readonly trueNow: () => number,
    seed = 1,
  ) {
    this.random = mulberry32(seed);
    this.runId = randomHex(this.random);
    this.replId = randomHex(this.random);
    this.vm = sharedVm ??= new ScriptVm();
  }

  /** The server's time in ms (`TIME`, rounded down to the millisecond as the scripts round it). */
  serverNow(): number {
    return Math.floor(this.trueNow() + this.clockOffsetMs);
  }

  // ---- faults ----------------------------------------------------------------------------------------------------

  /** The keyspace as it is now; a snapshot is never changed (restoring from one copies it). */
  snapshot(): Snapshot {
    if (this.lastSnapshot?.version === this.version) return this.lastSnapshot.snapshot;
    const data = new Map<string, Value>();
    for (const [key, value] of this.data) data.set(key, copyValue(value));
    const snapshot = { data };
    this.lastSnapshot = { version: this.version, snapshot };
    return snapshot;
  }

  /** The process restarts: new `run_id`; the data is the snapshot's (a reload, a promoted replica) or empty. */
  restart(from?: Snapshot, newReplId = true): void {
    this.restore(from);
    this.runId = randomHex(this.random);
    if (newReplId) this.replId = randomHex(this.random);
  }

  /** Older data comes back in the same process: `run_id` and replication ID stay (a reload, DEBUG RELOAD). */
  rollback(to: Snapshot): void {
    this.restore(to);
  }

  flushAll(): void {
    this.version++;
    this.data.clear();
  }

  /**
   * The slot of the namespace has moved to another node (Redis Cluster, `MIGRATE` of every key): the same data, now
   * served by another process, with its own `run_id` and replication ID (`to`, the importing node's, or new ones).
   */
  moveToAnotherNode(to: NodeIdentity = this.anotherNode()): void {
    this.runId = to.runId;
    this.replId = to.replId;
  }

  /** The identity of another Redis process (a slot migration's importing node). */
  anotherNode(): NodeIdentity {
    return { runId: randomHex(this.random), replId: randomHex(this.random) };
  }

  /**
   * Runs a script on the importing node of a slot migration, asked with ASKING once every key the script declares has
   * moved there: the same keys (this keyspace holds both nodes' keys of the slot), another process's `run_id`.
   */
  evalOn(node: NodeIdentity, script: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const own = { runId: this.runId, replId: this.replId };
    this.runId = node.runId;
    this.replId = node.replId;
    try {
      return this.eval(script, keys, args);
    } finally {
      this.runId = own.runId;
      this.replId = own.replId;
    }
  }

  has(key: string): boolean {
    return this.data.has(key);
  }

  /**
   * `maxmemory-policy allkeys-lru` under memory pressure: evicts up to `count` keys, those used longest ago first.
   * Redis samples (5 keys by default) rather than ordering exactly, so it may evict any key; the exact order is one of
   * the outcomes it can produce, and the simulator's `delete` fault covers any other subset.
   */
  evictLeastRecentlyUsed(count: number): string[] {
    const victims = [...this.data.keys()]
      .sort((a, b) => (this.usedAt.get(a) ?? 0) - (this.usedAt.get(b) ?? 0) || cmp(a, b))
      .slice(0, count);
    this.deleteKeys(victims);
    return victims;
  }

  deleteKeys(keys: readonly string[]): number {
    this.version++;
    let deleted = 0;
    for (const key of keys) if (this.data.delete(key)) deleted++;
    return deleted;
  }

  keys(): string[] {
    return [...this.data.keys()].sort();
  }

  /** The keyspace as plain data, sorted, for comparisons: hashes as sorted field lists, sorted sets by score. */
  dump(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key of this.keys()) {
      const value = this.data.get(key)!;
      if (value.type === 'string') out[key] = value.value;
      else if (value.type === 'hash') out[key] = Object.fromEntries([...value.value].sort(([a], [b]) => cmp(a, b)));
      else out[key] = this.zsorted(value.value).map(([member, score]) => [member, scoreString(score)]);
    }
    return out;
  }

  private restore(from?: Snapshot): void {
    this.version++;
    this.data = new Map();
    if (from !== undefined) for (const [key, value] of from.data) this.data.set(key, copyValue(value));
  }

  // ---- scripts ---------------------------------------------------------------------------------------------------

  /** `EVAL script keys args`: runs atomically, returns the reply as ioredis would, or throws a {@link RedisError}. */
  eval(script: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
    this.counts.scripts++;
    return this.vm.run(this, script, keys, args);
  }

  /** One command, as `redis.call` runs it (and as the trace test sends it to both servers). */
  command(args: readonly string[]): Reply {
    this.counts.commands++;
    const name = args[0].toUpperCase();
    const key = args[1];
    if (!READ_ONLY_COMMANDS.has(name)) this.version++;
    if (key !== undefined && name !== 'INFO') this.usedAt.set(key, this.counts.commands);
    switch (name) {
      case 'TIME': {
        const micros = Math.floor((this.trueNow() + this.clockOffsetMs) * 1000);
        return [String(Math.floor(micros / 1_000_000)), String(micros % 1_000_000)];
      }
      case 'INFO': {
        const section = (args[1] ?? '').toLowerCase();
        if (section === 'server') return `# Server\r\nredis_version:7.0.15\r\nrun_id:${this.runId}\r\n`;
        if (section === 'replication') {
          return `# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_replid:${this.replId}\r\n`;
        }
        throw new RedisError(`ERR INFO section ${section} not modelled`);
      }
      case 'GET': {
        const value = this.typed(key, 'string');
        return value === undefined ? null : value.value;
      }
      case 'SET':
        this.data.set(key, { type: 'string', value: args[2] });
        return { status: 'OK' };
      case 'DEL':
      case 'EXISTS': {
        let n = 0;
        for (const k of args.slice(1)) if (this.data.has(k)) n++;
        if (name === 'DEL') this.deleteKeys(args.slice(1));
        return n;
      }
      case 'HGET':
        return this.typed(key, 'hash')?.value.get(args[2]) ?? null;
      case 'HMGET': {
        const hash = this.typed(key, 'hash')?.value;
        return args.slice(2).map((field) => hash?.get(field) ?? null);
      }
      case 'HGETALL':
        return [...(this.typed(key, 'hash')?.value ?? new Map<string, string>())].flat();
      case 'HSET': {
        if (args.length < 4 || args.length % 2 !== 0) {
          throw new RedisError("ERR wrong number of arguments for 'hset' command");
        }
        const hash = this.hashFor(key);
        let added = 0;
        for (let i = 2; i < args.length; i += 2) {
          if (!hash.has(args[i])) added++;
          hash.set(args[i], args[i + 1]);
        }
        return added;
      }
      case 'HSETNX': {
        const hash = this.hashFor(key);
        if (hash.has(args[2])) return 0;
        hash.set(args[2], args[3]);
        return 1;
      }
      case 'HDEL': {
        const hash = this.typed(key, 'hash');
        if (hash === undefined) return 0;
        let n = 0;
        for (const field of args.slice(2)) if (hash.value.delete(field)) n++;
        if (hash.value.size === 0) this.data.delete(key);
        return n;
      }
      case 'HINCRBY': {
        const hash = this.hashFor(key);
        const current = hash.get(args[2]);
        const base = current === undefined ? 0 : parseHashInteger(current);
        const next = base + parseInteger(args[3]);
        hash.set(args[2], String(next));
        return next;
      }
      case 'ZADD': {
        if (args.length !== 4) throw new RedisError('ERR ZADD options are not modelled');
        const score = parseScore(args[2]);
        const zset = this.zsetFor(key);
        const added = zset.has(args[3]) ? 0 : 1;
        zset.set(args[3], score);
        return added;
      }
      case 'ZSCORE': {
        const score = this.typed(key, 'zset')?.value.get(args[2]);
        return score === undefined ? null : scoreString(score);
      }
      case 'ZRANK': {
        const zset = this.typed(key, 'zset')?.value;
        if (zset === undefined || !zset.has(args[2])) return null;
        return this.zsorted(zset).findIndex(([member]) => member === args[2]);
      }
      case 'ZRANGE': {
        const withScores = args.length === 5 && args[4].toUpperCase() === 'WITHSCORES';
        if (args.length !== 4 && !withScores) throw new RedisError('ERR ZRANGE options are not modelled');
        const sorted = this.zsorted(this.typed(key, 'zset')?.value ?? new Map<string, number>());
        const at = (index: number) => (index < 0 ? sorted.length + index : index);
        const found = sorted.slice(Math.max(0, at(parseInteger(args[2]))), at(parseInteger(args[3])) + 1);
        return withScores ? found.flatMap(([member, score]) => [member, scoreString(score)]) : found.map(([m]) => m);
      }
      case 'ZCARD':
        return this.typed(key, 'zset')?.value.size ?? 0;
      case 'ZCOUNT': {
        const min = parseRange(args[2]);
        const max = parseRange(args[3]);
        const zset = this.typed(key, 'zset')?.value ?? new Map<string, number>();
        return [...zset.values()].filter((score) => inRange(score, min, max)).length;
      }
      case 'ZRANGEBYSCORE': {
        const min = parseRange(args[2]);
        const max = parseRange(args[3]);
        let withScores = false;
        let offset = 0;
        let count = -1;
        for (let i = 4; i < args.length; i++) {
          const option = args[i].toUpperCase();
          if (option === 'WITHSCORES') withScores = true;
          else if (option === 'LIMIT') {
            offset = parseInteger(args[++i]);
            count = parseInteger(args[++i]);
          } else throw new RedisError('ERR syntax error');
        }
        const zset = this.typed(key, 'zset')?.value ?? new Map<string, number>();
        let found = this.zsorted(zset).filter(([, score]) => inRange(score, min, max));
        if (offset < 0) found = [];
        else found = found.slice(offset, count < 0 ? undefined : offset + count);
        return withScores ? found.flatMap(([member, score]) => [member, scoreString(score)]) : found.map(([m]) => m);
      }
      default:
        throw new RedisError(`ERR unknown command '${name}' (not modelled)`);
    }
  }

  private zsorted(zset: Map<string, number>): [string, number][] {
    return [...zset].sort(([ma, sa], [mb, sb]) => (sa !== sb ? sa - sb : cmp(ma, mb)));
  }

  private typed<T extends Value['type']>(key: string, type: T): Extract<Value, { type: T }> | undefined {
    const value = this.data.get(key);
    if (value === undefined) return undefined;
    if (value.type !== type) {
      throw new RedisError('WRONGTYPE Operation against a key holding the wrong kind of value');
    }
    return value as Extract<Value, { type: T }>;
  }

  private hashFor(key: string): Map<string, string> {
    const existing = this.typed(key, 'hash');
    if (existing !== undefined) return existing.value;
    const value = new Map<string, string>();
    this.data.set(key, { type: 'hash', value });
    return value;
  }

  private zsetFor(key: string): Map<string, number> {
    const existing = this.typed(key, 'zset');
    if (existing !== undefined) return existing.value;
    const value = new Map<string, number>();
    this.data.set(key, { type: 'zset', value });
    return value;
  }
}

// ---- the Lua VM ----------------------------------------------------------------------------------------------------

/**
 * One Lua state for every model in this process: the scripts are compiled once and kept by reference, and a script
 * runs against the model that called it (`redis.call` goes to {@link ScriptVm.model}). Sharing is safe because a
 * script runs to its end synchronously and Redis scripts keep no globals of their own (KEYS and ARGV are set anew on
 * every run). Building a state and compiling the four scripts cost more than a whole schedule's other work.
 */
class ScriptVm {
  private readonly L: LuaState;
  private readonly compiled = new Map<string, number>();
  private model: RedisModel | undefined;

  constructor() {
    if (stock === undefined) tuneFengari();
    this.L = this.newVm();
  }

  run(model: RedisModel, script: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
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
    const reply = this.fromLua(-1);
    lua.lua_pop(L, 1);
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
      if (type === lua.LUA_TNUMBER) args.push(luaNumberString(lua.lua_tonumber(L, i)));
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
  private fromLua(index: number): Reply | RedisError {
    const L = this.L;
    const type = lua.lua_type(L, index);
    if (type === lua.LUA_TNUMBER) return Math.trunc(lua.lua_tonumber(L, index));
    if (type === lua.LUA_TSTRING) return jsString(lua.lua_tostring(L, index));
    if (type === lua.LUA_TBOOLEAN) return lua.lua_toboolean(L, index) ? 1 : null;
    if (type !== lua.LUA_TTABLE) return null;
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
      const item = this.fromLua(-1);
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
      pushString(L, typeof value === 'number' ? luaNumberString(value) : value);
      lua.lua_rawseti(L, -2, i + 1);
    }
    lua.lua_setglobal(L, name);
  }
}

let sharedVm: ScriptVm | undefined;

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

/** Commands that never change the keyspace (any other command counts as a change, for {@link RedisModel.snapshot}). */
const READ_ONLY_COMMANDS = new Set([
  'TIME',
  'HMGET',
  'ZRANK',
  'ZRANGE',
  'INFO',
  'GET',
  'EXISTS',
  'HGET',
  'HGETALL',
  'ZSCORE',
  'ZCARD',
  'ZCOUNT',
  'ZRANGEBYSCORE',
]);

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

function parseHashInteger(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new RedisError('ERR hash value is not an integer');
  return Number(text);
}

function inRange(score: number, min: { value: number; exclusive: boolean }, max: typeof min): boolean {
  const aboveMin = min.exclusive ? score > min.value : score >= min.value;
  const belowMax = max.exclusive ? score < max.value : score <= max.value;
  return aboveMin && belowMax;
}

/** Byte order, as Redis compares members and as a sorted dump lists keys. */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
