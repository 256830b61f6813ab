import { rmSync } from 'node:fs';

/** Stops the redis-servers the e2e project's global setup started (SIGKILL: nothing in them is kept). */
export default async function stopSharedRedisServers() {
  const shared = globalThis.__SNOWFLAKE_SHARED_REDIS__;
  if (shared === undefined) return;
  globalThis.__SNOWFLAKE_SHARED_REDIS__ = undefined;
  await Promise.all(
    shared.servers.map(
      ({ child }) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  rmSync(shared.dir, { recursive: true, force: true });
}
