/** What the simulator's Redis model answers, and how its script engines meet it. */

/** What a command or a script replies, as ioredis hands it over: numbers, strings, null, arrays. */
export type Reply = number | string | null | Reply[] | { status: string };

export class RedisError extends Error {}

/** The server a script's `redis.call` reaches. */
export interface CommandServer {
  command(args: readonly string[]): Reply;
}

/**
 * Runs a Lua script against a server, atomically (synchronously, to its end), and returns its reply as Redis
 * converts it, or throws a {@link RedisError}: `ERR Error compiling script: …` or `ERR Error running script: …`.
 */
export interface ScriptEngine {
  run(server: CommandServer, script: string, keys: readonly string[], args: readonly (string | number)[]): Reply;
}
