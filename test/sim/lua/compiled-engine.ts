/**
 * The simulator's scripts compiled to JavaScript (compile.ts), and the bridge between them and the Redis model as
 * Redis builds it: `KEYS` and `ARGV` as tables of strings, `redis.call`'s arguments as strings (a number as `%.14g`),
 * its replies as Lua values (nil as false, a status as `{ok = …}`), and the script's value as a reply (a number
 * truncated, an array up to its first nil, `{err = …}` as an error).
 *
 * Inside a script a string holds one character per byte, as Lua's do (`#s`, `string.sub` count bytes); the model's
 * text crosses as UTF-8. The lease's keys and values are ASCII, which crosses as it is.
 */
import { RedisError, type CommandServer, type Reply, type ScriptEngine } from '../redis-reply.js';
import { compileLua, type CompiledScript } from './compile.js';
import { clientArgumentString, redisArgumentString } from './number-string.js';
import { first, LuaError, LuaTable } from './runtime.js';
import { MAX_REPLY_DEPTH, UnsupportedLua } from './unsupported.js';

export class CompiledEngine implements ScriptEngine {
  private readonly compiled = new Map<string, CompiledScript>();
  private server: CommandServer | undefined;
  private readonly redisCall = (...args: unknown[]): unknown => this.call(args);

  run(server: CommandServer, script: string, keys: readonly string[], args: readonly (string | number)[]): Reply {
    const fn = this.compile(script);
    const keyTable = new LuaTable(keys.map(toLuaString));
    const argTable = new LuaTable(args.map((a) => (typeof a === 'number' ? clientArgumentString(a) : toLuaString(a))));
    this.server = server;
    let value: unknown;
    try {
      // Redis keeps the first of the values a script returns (`return f()` may give several).
      value = first(fn(keyTable, argTable, this.redisCall));
    } catch (error) {
      if (error instanceof LuaError || error instanceof TypeError || error instanceof RangeError) {
        throw new RedisError(`ERR Error running script: ${error.message}`);
      }
      throw error;
    } finally {
      this.server = undefined;
    }
    const reply = fromLua(value);
    if (reply instanceof RedisError) throw reply;
    return reply;
  }

  private compile(script: string): CompiledScript {
    let fn = this.compiled.get(script);
    if (fn === undefined) {
      try {
        fn = compileLua(script);
      } catch (error) {
        // A syntax error is the script's (Redis refuses it the same way); a construct the compiler lacks is not.
        if (error instanceof SyntaxError) throw new RedisError(`ERR Error compiling script: ${error.message}`);
        throw error;
      }
      this.compiled.set(script, fn);
    }
    return fn;
  }

  /** `redis.call(...)`: the arguments as Redis converts them, the reply as Redis hands it to Lua. */
  private call(args: unknown[]): unknown {
    const command: string[] = [];
    for (const arg of args) {
      if (typeof arg === 'string') command.push(fromLuaString(arg));
      else if (typeof arg === 'number') command.push(redisArgumentString(arg));
      else throw new LuaError('Lua redis() command arguments must be strings or integers');
    }
    let reply: Reply;
    try {
      reply = this.server!.command(command);
    } catch (error) {
      throw new LuaError(error instanceof Error ? error.message : String(error));
    }
    return toLua(reply);
  }
}

function toLua(reply: Reply): unknown {
  if (reply === null) return false;
  if (typeof reply === 'number') return reply;
  if (typeof reply === 'string') return toLuaString(reply);
  if (Array.isArray(reply)) return new LuaTable(reply.map(toLua));
  const status = new LuaTable();
  status.set('ok', toLuaString(reply.status));
  return status;
}

/** The lowest 64-bit integer: what x86-64 makes of a double that C casts to `long long` and that does not fit. */
const LLONG_MIN = -(2 ** 63);

/** A script's value as a Redis reply. */
function fromLua(value: unknown, depth = 0): Reply | RedisError {
  // Redis casts a number to `long long`: truncated, and NaN, the infinities and whatever is out of range to LLONG_MIN.
  if (typeof value === 'number') return value >= LLONG_MIN && value < 2 ** 63 ? Math.trunc(value) : LLONG_MIN;
  if (typeof value === 'string') return fromLuaString(value);
  if (typeof value === 'boolean') return value ? 1 : null;
  if (!(value instanceof LuaTable)) return null;
  if (depth > MAX_REPLY_DEPTH) throw new UnsupportedLua(`a reply of tables nested more than ${MAX_REPLY_DEPTH} deep`);
  const nested = depth > 0;
  const error = value.get('err');
  if (typeof error === 'string') {
    // In an array, Redis replies with the error as one of the items, which a reply here has no way to hold.
    if (nested) throw new UnsupportedLua('an error table ({err = …}) inside a returned array');
    return new RedisError(fromLuaString(error));
  }
  const status = value.get('ok');
  if (typeof status === 'string') return { status: fromLuaString(status) };
  const out: Reply[] = [];
  for (const item of value.array) {
    if (item === undefined) break;
    out.push(fromLua(item, depth + 1) as Reply);
  }
  return out;
}

// Anything but printable ASCII takes the byte-exact way (which leaves ASCII control characters as they are).
const NON_ASCII = /[^\t\n\r -~]/;

function toLuaString(text: string): string {
  return NON_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}

function fromLuaString(bytes: string): string {
  return NON_ASCII.test(bytes) ? Buffer.from(bytes, 'latin1').toString('utf8') : bytes;
}
