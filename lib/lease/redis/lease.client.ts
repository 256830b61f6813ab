import { SnowflakeConfigError } from '../../core/errors.js';
import type { RedisClientLike } from '../lease.options.js';
import type { LeaseSettings } from '../lease.settings.js';
import { redactUrl, redisCause } from './redis-cause.js';
import { runScript, type ScriptName } from './script-cache.js';

export type { ScriptName } from './script-cache.js';

/**
 * The lease's connection to Redis: runs the scripts with a time limit per call, and closes the client only if
 * it created it.
 */
export class LeaseClient {
  /** The last connection error the client reported, for the causes of later failures. */
  private lastError: unknown;

  private constructor(
    private readonly client: RedisClientLike,
    private readonly owned: boolean,
    private readonly timeoutMs: number,
    /** Where the client connects, for messages: host and port, or the URL without its password. */
    readonly address: string,
  ) {
    client.on('error', (error: unknown) => {
      this.lastError = error;
    });
  }

  /** Uses the given client, or creates one from the URL (loading ioredis only then). */
  static async create(settings: LeaseSettings): Promise<LeaseClient> {
    if (settings.client !== undefined) {
      return new LeaseClient(settings.client, false, settings.connectTimeoutMs, addressOf(settings.client));
    }
    const { Redis } = await loadIoredis();
    const client = new Redis(settings.url!, {
      ...CONNECT_WITHOUT_HANDSHAKE,
      connectTimeout: settings.connectTimeoutMs,
      // Fail fast while disconnected instead of queueing: a renewal that arrives late is worth nothing.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      // Reconnect soon: a holder that reaches a restarted Redis before its fence takes its worker ID back without a
      // pause, and the fence comes after (ttl - margin), a few seconds with the defaults.
      retryStrategy: (times: number) => Math.min(times * 50, settings.renewIntervalMs / 2, 1000),
    });
    // Connection errors surface as failed commands, with their cause; without a listener ioredis would log each one.
    client.on('error', () => undefined);
    return new LeaseClient(client, true, settings.connectTimeoutMs, redactUrl(settings.url!));
  }

  /** Resolves once connected, or after `timeoutMs` (the next command then reports the failure). */
  async whenConnected(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return;
    // A client made with `lazyConnect` waits for a first command; the lease connects it rather than sit out the timeout.
    if (this.client.status === 'wait' && this.client.connect !== undefined) {
      this.client.connect().catch(() => undefined);
    }
    await new Promise<void>((resolve) => {
      const client = this.client;
      const timer = setTimeout(done, timeoutMs);
      // Wrong credentials or an unknown host do not pass by waiting: the first command reports them at once.
      const onError = (error: unknown) => {
        if (!redisCause(error).transient) done();
      };
      client.once('ready', done);
      client.on('error', onError);
      function done(): void {
        clearTimeout(timer);
        client.removeListener?.('ready', done);
        client.removeListener?.('error', onError);
        resolve();
      }
    });
  }

  /**
   * Runs a lease script, rejecting after the time limit. Only on a ready connection: a client with an offline queue
   * (the default of a client the app passes in) would otherwise run a timed-out claim when Redis returns, taking an
   * ID for a TTL under a token nobody holds.
   */
  async run(script: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown[]> {
    if (this.client.status !== 'ready') {
      throw new LeaseConnectionError(this.address, `not connected (connection ${this.client.status})`, this.lastError);
    }
    // The script's body is sent after NOSCRIPT only while this call still waits, on a connection still ready.
    const deadline = performance.now() + this.timeoutMs;
    const stillWanted = () => performance.now() < deadline && this.client.status === 'ready';
    try {
      return await withTimeout(
        runScript(this.client, script, keys, args, stillWanted),
        this.timeoutMs,
        `Redis ${script}`,
      );
    } catch (error) {
      throw new LeaseConnectionError(this.address, `${script} failed`, error);
    }
  }

  /** `WAIT replicas timeout`: how many replicas acknowledged the writes so far. */
  async waitForReplicas(replicas: number, timeoutMs: number): Promise<number> {
    const acked = await withTimeout(
      this.client.call('WAIT', replicas, timeoutMs),
      timeoutMs + this.timeoutMs,
      'Redis WAIT',
    );
    return Number(acked);
  }

  /**
   * Drops the connection and connects again: an ioredis Sentinel client then asks the Sentinels for the master
   * afresh, instead of staying on a primary they replaced.
   */
  reconnect(): void {
    this.client.disconnect(true);
  }

  /** Closes the client if the lease created it; a client given by the app is left open. */
  async close(): Promise<void> {
    if (!this.owned) return;
    try {
      await withTimeout(this.client.quit(), this.timeoutMs, 'Redis QUIT');
    } catch {
      this.client.disconnect();
    }
  }
}

/**
 * What the client the lease creates from a URL sends before its first script: nothing but what the URL asks for
 * (credentials, a database). ioredis would otherwise spend two round trips per connection before the first script,
 * on every boot and every reconnect: `HELLO 3` with two `CLIENT SETINFO` (a Redis before 7.2 refuses the latter), then
 * `INFO` as its ready check. None of them carries anything the lease relies on:
 *
 * - `protocol: 2` (RESP2, no `HELLO`): the scripts' replies are arrays of strings and integers, the same in both
 *   protocols; ioredis 5 speaks RESP2 too. With a password in the URL, `AUTH` takes `HELLO`'s place.
 * - `disableClientInfo`: the library name in `CLIENT LIST`, for operators only.
 * - `enableReadyCheck: false`: the ready check's `INFO` only waits while a restarted Redis loads its data. A script
 *   sent meanwhile is refused with `LOADING`, which the lease takes as a transient failure, as it took "not
 *   connected" before: the claim retries after its back-off, a renewal counts as failed and the fence runs on. The
 *   server's identity (`run_id`, replication ID) was never read from this `INFO`: every script reads it itself
 *   (`prelude.lua.ts`), inside the same atomic call that compares it with the namespace's marker, because only a
 *   reading taken there tells a restart or failover between two round trips; a reading per connection would not.
 *
 * A client the app passes in (`redis.client`) keeps its own options.
 */
export const CONNECT_WITHOUT_HANDSHAKE = {
  protocol: 2,
  disableClientInfo: true,
  enableReadyCheck: false,
} as const;

/**
 * A lease call that could not reach Redis or was refused by it, with the cause, the address and advice; `transient`
 * says whether retrying may help.
 */
export class LeaseConnectionError extends Error {
  readonly code: string;
  readonly transient: boolean;
  readonly advice: string;

  constructor(address: string, what: string, cause: unknown) {
    const found = redisCause(cause);
    const text = cause === undefined ? '' : `: ${cause instanceof Error ? cause.message : JSON.stringify(cause)}`;
    // A code read from the words of a reply (a protocol error that means NOAUTH) is named beside them.
    const detail = found.code === 'NOAUTH' && !text.includes('NOAUTH') ? `${text} (NOAUTH)` : text;
    super(`Redis at ${address}: ${what}${detail}`, { cause });
    this.code = found.code;
    this.transient = cause === undefined || found.transient;
    this.advice = found.advice;
  }
}

/** Where an app's own client connects: host and port from its options, never its password. */
function addressOf(client: RedisClientLike): string {
  const options = (client as { options?: { host?: unknown; port?: unknown; sentinels?: unknown } }).options;
  if (options?.sentinels !== undefined) return 'the Sentinel-managed primary of the client passed in';
  if (typeof options?.host === 'string') {
    return `${options.host}:${typeof options.port === 'number' ? options.port : 6379}`;
  }
  return 'the client passed in (redis.client)';
}

/** ioredis is an optional peer: only `redis.url` needs it, and its absence is a set-up step to name, not a crash. */
async function loadIoredis(): Promise<{ Redis: typeof import('ioredis').Redis }> {
  try {
    return await import('ioredis');
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new SnowflakeConfigError(
      'redis.url',
      'a Redis lease from a URL needs the ioredis package, an optional peer of nestjs-snowflake that is not ' +
        'installed: run `npm install ioredis`, or pass a client of your own as `redis.client`.',
    );
  }
}

/** Rejects after `ms` unless `promise` settled first. @internal */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
