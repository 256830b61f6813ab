// The two base classes every error of the library extends: one `instanceof` catches them all, and the second tells
// the errors that pass by themselves (503 over HTTP) from the rest. The families of errors live beside this file.

/**
 * Base class of every error the library throws, so callers can catch them all with one `instanceof`.
 *
 * @publicApi
 */
export class SnowflakeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * Base class of the errors that pass by themselves: the lease is being (re-)claimed, Redis is away, the clock or the
 * sequence catches up. Retrying later succeeds, so over HTTP they answer 503.
 *
 * They carry the shape of an `http-errors` error (`status`, `statusCode`, `expose`), which Nest's default exception
 * handler answers with its own status: an app that registered no filter answers 503 rather than 500, on Express and
 * Fastify alike. `expose` is false, so that the client sees "Service Unavailable" and not the message, which speaks of
 * the deployment (Redis addresses, option names). `SnowflakeExceptionFilter` adds `Retry-After`.
 *
 * @publicApi
 */
export class TransientSnowflakeError extends SnowflakeError {
  /** The HTTP status that fits: 503 Service Unavailable. */
  readonly status = 503;
  /** The same as `status`, as `http-errors` sets both. */
  readonly statusCode = 503;
  /** Whether a client may see the message: no, it names the deployment's parts. */
  readonly expose = false;
  /**
   * How long until a retry may succeed, when it is known (what is left of a namespace's settling), in ms;
   * `SnowflakeExceptionFilter` turns it into `Retry-After`.
   */
  readonly retryAfterMs?: number;

  constructor(message: string, retryAfterMs?: number) {
    super(message);
    if (retryAfterMs !== undefined) this.retryAfterMs = Math.max(0, Math.round(retryAfterMs));
  }
}
