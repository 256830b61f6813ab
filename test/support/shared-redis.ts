import { randomBytes } from 'node:crypto';
import { settledNamespace } from './settled-namespace.js';

/**
 * The redis-server of this Jest worker process, started by the e2e project's global setup
 * (shared-redis.global-setup.js): suites that need a plain Redis share it, each test in a namespace of its own,
 * instead of starting a server per suite. A suite that stops, restarts or configures its server starts its own
 * (redis-server.ts).
 */
export function sharedRedisUrl(): string {
  const ports = (process.env.SNOWFLAKE_TEST_REDIS_PORTS ?? '').split(',').filter((port) => port !== '');
  if (ports.length === 0) {
    throw new Error(
      'No shared redis-server: this suite runs in the e2e project of jest.config.js (npm test, npm run test:e2e, ' +
        'or npx jest <file> with that config), whose global setup starts one per Jest worker.',
    );
  }
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  return `redis://127.0.0.1:${ports[(worker - 1) % ports.length]}`;
}

/** Tells this file's namespaces from those of earlier files on the same server (same worker, same pid). */
const RUN = randomBytes(4).toString('hex');
let namespaces = 0;

/** A namespace that no other test on the shared server uses: `prefix`, this file's random tag and a counter. */
export function uniqueNamespace(prefix: string): string {
  return `${prefix}-${RUN}-${++namespaces}`;
}

/**
 * A fresh namespace on the shared server, started as if its first-use settling had passed (settled-namespace.ts),
 * for tests that are not about settling.
 */
export async function settledSharedNamespace(
  prefix: string,
  datacenter: number | 'allocated' = 0,
): Promise<{ url: string; namespace: string }> {
  const url = sharedRedisUrl();
  const namespace = uniqueNamespace(prefix);
  await settledNamespace(url, namespace, datacenter);
  return { url, namespace };
}
