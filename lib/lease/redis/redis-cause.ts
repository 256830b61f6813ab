/**
 * Why Redis could not be used, in words an operator acts on: the underlying error (`WRONGPASS`, `NOAUTH`,
 * `ENOTFOUND`, `ECONNREFUSED`, a timeout), the address (never the password), advice that fits the cause, and whether
 * retrying can help. Authentication and configuration errors cannot pass by themselves, so bootstrap fails at once
 * instead of retrying them like a network blip.
 */
export interface RedisCause {
  /** The error code or Redis reply prefix, such as `WRONGPASS` or `ECONNREFUSED`. */
  code: string;
  /** Whether a retry may succeed (a network error), or not (credentials, an unknown host, a wrong database). */
  transient: boolean;
  /** One sentence: what to do. */
  advice: string;
}

const FATAL: Record<string, string> = {
  WRONGPASS: 'the username or password is wrong: check the password in `redis.url` (or the client you pass in)',
  NOAUTH: 'Redis requires a password and none was given: add it to `redis.url` (`redis://:password@host:6379`)',
  NOPERM: "the Redis user lacks a permission the lease needs (EVAL, EVALSHA, the namespace's keys): grant it with ACL",
  ENOTFOUND: "the host name does not resolve: check the host in `redis.url` and this machine's DNS",
  EAI_AGAIN: "the host name could not be resolved right now: check this machine's DNS",
  ERR_DB: 'the database index in `redis.url` does not exist on this server: use one below its `databases` setting',
  ERR_NO_PASSWORD: 'a password was given but this Redis has none configured: remove it from `redis.url`, or set one',
};

const TRANSIENT: Record<string, string> = {
  ECONNREFUSED: 'nothing listens at that address: check that Redis runs there and the port is right',
  ECONNRESET: 'the connection was reset: check the network between this instance and Redis',
  ETIMEDOUT: 'the connection timed out: check the network and firewalls between this instance and Redis',
  EHOSTUNREACH: 'the host is unreachable: check the network between this instance and Redis',
  TIMEOUT: 'Redis did not answer in time: check its load and the network, or raise `redis.connectTimeoutMs`',
  LOADING: 'Redis is loading its data set after a restart: it answers once loaded',
  READONLY: 'the server is a read-only replica: point `redis.url` at the primary (or use Sentinel)',
};

/** The cause of `error`, classified. */
export function redisCause(error: unknown): RedisCause {
  const code = codeOf(error);
  if (code in FATAL) return { code, transient: false, advice: FATAL[code] };
  if (code in TRANSIENT) return { code, transient: true, advice: TRANSIENT[code] };
  return { code, transient: true, advice: 'check that Redis is reachable at that address' };
}

function codeOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== '') return code;
  if (/invalid DB index|DB index is out of range/i.test(text)) return 'ERR_DB';
  if (/called without any password configured/i.test(text)) return 'ERR_NO_PASSWORD';
  // A server that requires a password refuses any command longer than a few arguments from a connection that has
  // not authenticated, before it reads the command (so before NOAUTH): the lease's first command is a script.
  if (/unauthenticated (multi)?bulk length/i.test(text)) return 'NOAUTH';
  const prefix = /^([A-Z]{4,})\b/.exec(text);
  if (prefix !== null) return prefix[1];
  if (/did not answer within|timed? ?out/i.test(text)) return 'TIMEOUT';
  return 'UNKNOWN';
}

/** `redis://user:secret@host:6379/0` → `redis://user:***@host:6379/0`; other text unchanged. */
export function redactUrl(url: string): string {
  return url.replace(/^(\w+:\/\/)([^:@/]*):([^@/]*)@/, (_all, scheme: string, user: string) => `${scheme}${user}:***@`);
}
