import type { IdIssuer } from '../id-issuer.js';

/** The name `@GeneratedId()` without `generator` takes IDs from. @internal */
export const DEFAULT_ISSUER = 'default';

/**
 * Where `@GeneratedId()` columns take IDs from, by generator name: the app's `SnowflakeModule` registrations, or what
 * was passed to `attachGeneratedIds()`.
 *
 * @internal
 */
export interface IdIssuers {
  /** The issuer of that name (`'default'` for the registration without one); undefined when there is none. */
  get(name: string): IdIssuer | undefined;
  /** The names there are, for messages. */
  names(): readonly string[];
}

/** The issuers of `attachGeneratedIds(dataSource, ids, { generators })`. @internal */
export function issuersOf(ids: IdIssuer, generators: Readonly<Record<string, IdIssuer>> = {}): IdIssuers {
  const byName = new Map<string, IdIssuer>([[DEFAULT_ISSUER, ids], ...Object.entries(generators)]);
  return { get: (name) => byName.get(name), names: () => [...byName.keys()] };
}
