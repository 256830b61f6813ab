import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { InvalidSnowflakeError, SnowflakeError, TransientSnowflakeError } from '../core/errors.js';

/**
 * The GraphQL error codes the library's errors map to, those of Apollo Server's conventions, which Mercurius apps use
 * as well.
 *
 * @publicApi
 */
export type SnowflakeGraphQLErrorCode = 'BAD_USER_INPUT' | 'SERVICE_UNAVAILABLE' | 'INTERNAL_SERVER_ERROR';

/** Seconds a client should wait before retrying after `SERVICE_UNAVAILABLE`, as over HTTP (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 1;

/** What a client may read of an error: its message, code and extensions; never what speaks of the deployment. */
interface PublicError {
  message: string;
  extensions: { code: SnowflakeGraphQLErrorCode; type: string; retryAfterSeconds?: number };
}

/**
 * - `InvalidSnowflakeError`: the client's mistake, with its reason: `BAD_USER_INPUT`.
 * - a `TransientSnowflakeError`: a temporary outage, `SERVICE_UNAVAILABLE` with `retryAfterSeconds`; its message names
 *   Redis addresses and options, so clients get a generic one (the exception filter logs the real one).
 * - any other `SnowflakeError` (a misconfiguration): `INTERNAL_SERVER_ERROR`, with Nest's generic message.
 */
function publicError(error: SnowflakeError): PublicError {
  if (error instanceof InvalidSnowflakeError) {
    return { message: error.message, extensions: { code: 'BAD_USER_INPUT', type: error.name } };
  }
  if (error instanceof TransientSnowflakeError) {
    return {
      message: `No ID can be issued right now; retry in ${RETRY_AFTER_SECONDS} s.`,
      extensions: { code: 'SERVICE_UNAVAILABLE', type: error.name, retryAfterSeconds: RETRY_AFTER_SECONDS },
    };
  }
  return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', type: error.name } };
}

/**
 * The GraphQL error a client sees for one of the library's errors: `extensions.code` is `BAD_USER_INPUT` for an
 * `InvalidSnowflakeError` (with its reason), `SERVICE_UNAVAILABLE` with `retryAfterSeconds` for every
 * `TransientSnowflakeError`, and `INTERNAL_SERVER_ERROR` for the others; `extensions.type` names the error class.
 * Only the invalid ID's error keeps the library's error as `originalError`: the others' messages and stacks name
 * Redis addresses and options, which error formatters in development mode would print.
 *
 * @publicApi
 */
export function snowflakeGraphQLError(error: SnowflakeError): GraphQLError {
  const { message, extensions } = publicError(error);
  return new GraphQLError(message, {
    extensions,
    originalError: error instanceof InvalidSnowflakeError ? error : undefined,
  });
}

/**
 * An Apollo Server `formatError` (or a step of yours) that maps the library's errors wherever they were thrown:
 * resolvers the exception filter does not cover, and the `Snowflake` scalar's input errors. A code already set by
 * the server or the app is kept (Apollo's `GRAPHQL_VALIDATION_FAILED` for an ID written in the query, say), except the
 * `INTERNAL_SERVER_ERROR` given to any error without one; other errors are returned as they are.
 *
 * @example
 * ```ts
 * GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, formatError: formatSnowflakeGraphQLError });
 * ```
 *
 * @publicApi
 */
export function formatSnowflakeGraphQLError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const cause = snowflakeCause(error);
  if (cause === undefined) return formatted;
  const { message, extensions } = publicError(cause);
  const given = formatted.extensions?.code;
  const code = given === undefined || given === 'INTERNAL_SERVER_ERROR' ? extensions.code : given;
  if (cause instanceof InvalidSnowflakeError) {
    return { ...formatted, extensions: { ...formatted.extensions, code, type: extensions.type } };
  }
  // A development-mode stack trace would repeat the message withheld here.
  const { stacktrace: _withheld, ...kept } = formatted.extensions ?? {};
  return { ...formatted, message, extensions: { ...kept, ...extensions, code } };
}

/** The library's error behind a GraphQL error, however many times servers wrapped it. */
function snowflakeCause(error: unknown): SnowflakeError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    if (current instanceof SnowflakeError) return current;
    current = current instanceof GraphQLError ? current.originalError : undefined;
  }
  return undefined;
}
