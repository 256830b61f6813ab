import { createHash } from 'node:crypto';
import { CLAIM_SCRIPT, NOTE_SCRIPT, RELEASE_SCRIPT, RENEW_SCRIPT } from './lease.scripts.js';
import type { RedisClientLike } from '../lease.options.js';

/** Every lease script declares four keys: meta, cursor, expiry and the one record it touches. */
const NUMBER_OF_KEYS = 4;

function script(lua: string): { lua: string; sha: string } {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** The lease's scripts with their SHA1 digests, hashed once per process rather than once per client. */
export const LEASE_SCRIPTS = {
  claim: script(CLAIM_SCRIPT),
  renew: script(RENEW_SCRIPT),
  release: script(RELEASE_SCRIPT),
  note: script(NOTE_SCRIPT),
} as const;

export type ScriptName = keyof typeof LEASE_SCRIPTS;

/**
 * Runs a lease script by its digest (`EVALSHA`), and sends its body (`EVAL`) only when the server answers `NOSCRIPT`:
 * after a restart, a failover to a node that never ran it, `SCRIPT FLUSH`, or a script cache that evicted it.
 *
 * ioredis's own script commands (`defineCommand`) send the whole body with `EVAL` on the first call of every new
 * connection, whether or not the server knows the script: a fleet that boots at once sends the 10 kB claim script
 * once per instance, and the server hashes it each time. Here a server that has run the script once (any instance's
 * first call) answers every later instance's first call by digest.
 *
 * Retrying after `NOSCRIPT` is safe: the server ran nothing (the script was not found), so the script runs once.
 * The body goes only while the caller still waits for the reply (`stillWanted`): sent after the caller's time limit,
 * it would run after whatever the lease sent next on the connection (a release at shutdown, a newer renewal), out of
 * order. A call given up on is reported as failed, and nothing of it runs.
 * The fallback is `EVAL`, not `SCRIPT LOAD` then `EVALSHA`: one round trip instead of two, and in a Cluster `EVAL`
 * goes by its keys to the node that owns the namespace's slot, where `SCRIPT LOAD` (no key) would go to any node.
 * A call that falls back spans two round trips, and the lease measures its clock offset over the whole call: the
 * error bound (half the time between sending and the reply) is wider, which can refuse a claim, never admit one.
 */
export async function runScript(
  client: RedisClientLike,
  name: ScriptName,
  keys: string[],
  args: (string | number)[],
  stillWanted: () => boolean = () => true,
): Promise<unknown[]> {
  const { lua, sha } = LEASE_SCRIPTS[name];
  try {
    return (await client.call('EVALSHA', sha, NUMBER_OF_KEYS, ...keys, ...args)) as unknown[];
  } catch (error) {
    if (!isNoScript(error) || !stillWanted()) throw error;
    return (await client.call('EVAL', lua, NUMBER_OF_KEYS, ...keys, ...args)) as unknown[];
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
