/**
 * A Redis server in memory that runs the lease's own Lua scripts, for the simulator: a keyspace of strings, hashes and
 * sorted sets, a server clock, a `run_id` and a replication ID, and the faults the lease must survive (restart empty or
 * from a snapshot, FLUSHALL, deletion of any keys, a rollback in the same process).
 *
 * The scripts run compiled to JavaScript (lua/compiled-engine.ts), or in fengari, a Lua VM in JavaScript
 * (lua/fengari-engine.ts, with `SIM_LUA=fengari`); both keep Lua 5.1's semantics, the Lua of Redis.
 *
 * Only the commands the scripts call are modelled (see {@link RedisModel.command}); key expiry (EXPIRE) and eviction
 * policies are not: eviction is modelled as the deletion of keys, which the simulator chooses.
 */
import { mulberry32 } from '../support/seeded-random.js';
import { scriptEngine } from './lua/engines.js';
import { redisArgumentString } from './lua/number-string.js';
import { stringToNumber } from './lua/runtime.js';
import { RedisError, type Reply, type ScriptEngine } from './redis-reply.js';

export { RedisError, type Reply } from './redis-reply.js';

type Value =
  | { type: 'string'; value: string }
  | { type: 'hash'; value: Map<string, string> }
  | { type: 'zset'; value: Map<string, number> };

/** A copy of the keyspace, to restart from or roll back to. */
export interface Snapshot {
  readonly data: ReadonlyMap<string, Value>;
}

/** A Redis process's identity as the scripts read it (`INFO`), and its host's clock as `TIME` reads it. */
export interface NodeIdentity {
  readonly runId: string;
  readonly replId: string;
  /** The host's clock minus the simulation's true time (ms). */
  readonly clockOffsetMs: number;
}

/** A score as Redis (7.0) prints it in a reply: `%.17g`. */
function scoreString(score: number): string {
  return redisArgumentString(score);
}

/**
 * A score as Redis reads one (`string2d`): what strtod reads, with nothing before or after it, not NaN, and not a
 * number that overflows to an infinity or underflows to zero (ERANGE). So `0x1p4` and `-0x10` are scores, ` 7`
 * and `1e400` are not.
 */
function parseScore(text: string): number {
  const spaced = /^[ \t\n\v\f\r]|[ \t\n\v\f\r]$|\0/.test(text);
  const n = spaced ? undefined : stringToNumber(text);
  if (n === undefined || Number.isNaN(n)) throw new RedisError('ERR value is not a valid float');
  const hex = /^[-+]?0[xX]/.test(text);
  const mantissa = text.replace(/^[-+]?(0[xX])?/, '').replace(hex ? /[pP].*$/ : /[eE].*$/, '');
  const overflow = !Number.isFinite(n) && !/inf/i.test(text);
  const underflow = n === 0 && /[1-9a-fA-F]/.test(mantissa);
  if (overflow || underflow) throw new RedisError('ERR value is not a valid float');
  // A small sorted set (a listpack, as the lease's are) keeps -0 as the integer 0; only a big one keeps its sign.
  return n === 0 ? 0 : n;
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
  /** When each key was last read or written (true ms), or loaded by a restart: its idle time, as Redis's LRU clock keeps it. */
  private readonly usedAtMs = new Map<string, number>();
  runId: string;
  replId: string;
  /** Server clock minus the simulation's true time (ms); the server's `TIME` is `trueNow() + clockOffsetMs`. */
  clockOffsetMs = 0;
  /** Microseconds within the millisecond that `TIME` reports (Redis reports real microseconds; 0 keeps it exact). */
  private readonly random: () => number;
  private readonly vm: ScriptEngine;
  /** Scripts run, by name, and commands they called. */
  readonly counts = { scripts: 0, commands: 0 };
  /** Raised by every change of the keyspace, so that a snapshot of an unchanged keyspace is the last one again. */
  private version = 0;
  private lastSnapshot: { version: number; snapshot: Snapshot } | undefined;

  constructor(
    private readonly trueNow: () => number,
    seed = 1,
    engine: ScriptEngine = scriptEngine(),
  ) {
    this.random = mulberry32(seed);
    this.runId = randomHex(this.random);
    this.replId = randomHex(this.random);
    this.vm = engine;
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
    this.clockOffsetMs = to.clockOffsetMs;
  }

  /** The identity of another Redis process (a slot migration's importing node), on a host with this clock. */
  anotherNode(clockOffsetMs = this.clockOffsetMs): NodeIdentity {
    return { runId: randomHex(this.random), replId: randomHex(this.random), clockOffsetMs };
  }

  /**
   * Runs a script on the importing node of a slot migration, asked with ASKING once every key the script declares has
   * moved there: the same keys (this keyspace holds both nodes' keys of the slot), another process's `run_id`.
   */
  evalOn(node: NodeIdentity, script: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const own = { runId: this.runId, replId: this.replId, clockOffsetMs: this.clockOffsetMs };
    this.runId = node.runId;
    this.replId = node.replId;
    this.clockOffsetMs = node.clockOffsetMs;
    try {
      return this.eval(script, keys, args);
    } finally {
      this.runId = own.runId;
      this.replId = own.replId;
      this.clockOffsetMs = own.clockOffsetMs;
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

  /**
   * `maxmemory-policy allkeys-lru` above `maxmemory` with many other keys (the app's): what Redis evicts is whatever has
   * been idle longest among all of them, so the namespace loses every key idle for `idleMs` or more, where `idleMs` is
   * how long the app's own keys stay. A free ID's record (nothing reads it) goes once it has been idle that long, while
   * keys every claim and renewal touch stay.
   */
  evictIdle(idleMs: number): string[] {
    const now = this.trueNow();
    const victims = [...this.data.keys()].filter((key) => now - (this.usedAtMs.get(key) ?? -Infinity) >= idleMs);
    if (victims.length > 0) this.deleteKeys(victims.sort(cmp));
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
    // A key loaded from a snapshot counts as used when it was loaded.
    const now = this.trueNow();
    for (const key of this.data.keys()) this.usedAtMs.set(key, now);
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
    if (key !== undefined && name !== 'INFO') {
      this.usedAt.set(key, this.counts.commands);
      this.usedAtMs.set(key, this.trueNow());
    }
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
        if (args.length !== 3) throw new RedisError('ERR SET options are not modelled');
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
