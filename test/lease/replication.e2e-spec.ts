import 'reflect-metadata';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleLogger, type LoggerService } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { IdService, RedisUnavailableError, SnowflakeModule } from '../../lib/index.js';
import { RedisServer, freePort, REDIS_SERVER_BINARY } from '../support/redis-server.js';
import { issueInBackground } from '../support/issue-in-background.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep, waitUntil } from '../support/time.js';

const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 3, sequenceBits: 12 } as const;
const TTL = 2000;

/** Polls `check` as `waitUntil` does; a check that throws (a server starting, a link down) counts as not yet. */
const waitFor = (what: string, check: () => Promise<boolean>, timeoutMs = 15_000) =>
  waitUntil(() => check().catch(() => false), timeoutMs, what);

async function replicaInSync(primary: RedisServer, replicas: number): Promise<boolean> {
  const client = new Redis(primary.url, { lazyConnect: true });
  try {
    await client.connect();
    const info = await client.info('replication');
    return new RegExp(`connected_slaves:${replicas}`).test(info) && /state=online/.test(info);
  } finally {
    client.disconnect();
  }
}

/**
 * A TCP relay on loopback in front of a primary, for its replica's link. `hold()` stops passing the primary's
 * replication stream on, so the replica misses whatever the primary writes from then on. (Freezing the replica
 * process would not do: the kernel keeps receiving, and the replica reads it all when it resumes.)
 */
async function startLink(primaryPort: number): Promise<{ port: number; hold: () => void; close: () => Promise<void> }> {
  const port = await freePort();
  let holding = false;
  const sockets = new Set<Socket>();
  const server = createServer((fromReplica) => {
    const toPrimary = connect(primaryPort, '127.0.0.1');
    for (const socket of [fromReplica, toPrimary]) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        fromReplica.destroy();
        toPrimary.destroy();
      });
      socket.on('error', () => undefined);
    }
    fromReplica.pipe(toPrimary);
    toPrimary.on('data', (chunk: Buffer) => {
      if (!holding) fromReplica.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    hold: () => {
      holding = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A Redis Sentinel (redis-server --sentinel) watching one primary, with a short failure detection. */
async function startSentinel(
  primaryPort: number,
  downAfterMs = 500,
): Promise<{ port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'snowflake-sentinel-'));
  const config = join(dir, 'sentinel.conf');
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor main 127.0.0.1 ${primaryPort} 1`,
      `sentinel down-after-milliseconds main ${downAfterMs}`,
      'sentinel failover-timeout main 3000',
      'sentinel parallel-syncs main 1',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(REDIS_SERVER_BINARY, [config, '--sentinel'], { stdio: 'ignore' });
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => 50 });
  probe.on('error', () => undefined);
  await waitFor('sentinel', async () => {
    if (probe.status !== 'ready') await probe.connect().catch(() => undefined);
    return (await probe.ping()) === 'PONG';
  });
  probe.disconnect();
  return {
    port,
    stop: async () => {
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('Redis replication: waitForReplicas and a Sentinel failover (real redis-server processes)', () => {
  const modules: TestingModule[] = [];
  const servers: RedisServer[] = [];
  const clients: Redis[] = [];

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
    for (const client of clients.splice(0)) client.disconnect();
    await Promise.all(servers.splice(0).map((s) => s.dispose()));
  });

  /** Boots a module whose lease talks to the primary that Sentinel names. */
  async function bootThroughSentinel(
    sentinelPort: number,
    redis: Record<string, unknown>,
    {
      layout = LAYOUT,
      natMap,
      logger,
    }: {
      layout?: Record<string, number>;
      natMap?: Record<string, { host: string; port: number }>;
      logger?: LoggerService;
    } = {},
  ): Promise<IdService> {
    const client = new Redis({
      sentinels: [{ host: '127.0.0.1', port: sentinelPort }],
      name: 'main',
      commandTimeout: 500,
      ...(natMap && { natMap }),
    });
    client.on('error', () => undefined);
    clients.push(client);
    const module = await Test.createTestingModule({
      imports: [SnowflakeModule.forRoot({ layout, redis: { client, retryBackoffMs: 50, ...redis } })],
    }).compile();
    if (logger !== undefined) module.useLogger(logger);
    modules.push(module);
    await module.init();
    return module.get(IdService);
  }

  const promoted = (server: RedisServer) => async () => {
    const probe = new Redis(server.url, { lazyConnect: true });
    try {
      await probe.connect();
      return /role:master/.test(await probe.info('replication'));
    } finally {
      probe.disconnect();
    }
  };

  /**
   * The Sentinel names `server` as the master and its failover is over (flags just `master`): a claim then is
   * confirmed. On a loaded machine the promoted replica answers as a master well before the Sentinel ends the failover.
   */
  const sentinelNames = (sentinelPort: number, server: RedisServer) => async () => {
    const probe = new Redis({ port: sentinelPort, host: '127.0.0.1', lazyConnect: true });
    try {
      await probe.connect();
      const fields = (await probe.call('SENTINEL', 'MASTER', 'main')) as string[];
      const master = Object.fromEntries(fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : [])));
      return Number(master.port) === server.port && master.flags === 'master';
    } finally {
      probe.disconnect();
    }
  };

  it('confirms claims only once a replica acknowledged them, and fails clearly when none does', async () => {
    const primary = await RedisServer.start();
    servers.push(primary);
    const replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    servers.push(replica);
    await waitFor('replica sync', () => replicaInSync(primary, 1));
    await settledNamespace(primary.url, 'acked');

    const module = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          redis: {
            url: primary.url,
            namespace: 'acked',
            ttlMs: TTL,
            waitForReplicas: 1,
            waitForReplicasTimeoutMs: 300,
          },
        }),
      ],
    }).compile();
    modules.push(module);
    await module.init();
    const ids = module.get(IdService);
    expect(ids.decode(ids.next()).workerId).toBe(ids.workerId);
    // The claim reached the replica before the holder issued anything.
    const onReplica = new Redis(replica.url);
    clients.push(onReplica);
    expect(await onReplica.hget(`snowflake:{acked:dc0}:w:${ids.workerId}`, 'token')).toMatch(/^[0-9a-f-]{36}$/);

    await replica.stop();
    // The claim runs while the module is built: its failure rejects compile(), as an invalid option would.
    const error = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          redis: {
            url: primary.url,
            namespace: 'acked',
            ttlMs: TTL,
            waitForReplicas: 1,
            waitForReplicasTimeoutMs: 100,
            bootstrapAttempts: 2,
            retryBackoffMs: 50,
          },
        }),
      ],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toMatch(/replicas acknowledged/);
    // The holder's renewals are no longer acknowledged either: it fences itself instead of trusting them.
    await sleep(TTL);
    expect(() => ids.next()).toThrow(expect.objectContaining({ reason: 'fenced' }));
  });

  it('refuses no ID on confirmed holders when the master restarts faster than down-after (no failover)', async () => {
    const primary = await RedisServer.start();
    servers.push(primary);
    // Sentinels refresh a master's run_id from its INFO every 10 s: after the restart they name the old process.
    const sentinels = [await startSentinel(primary.port, 5000)];
    await settledNamespace(primary.url, 'restart');
    const holders: IdService[] = [];
    const refusals: string[] = [];
    const issued: bigint[] = [];
    let running = true;
    try {
      for (let i = 0; i < 2; i++) {
        holders.push(
          await bootThroughSentinel(sentinels[0].port, { namespace: 'restart', ttlMs: 3 * TTL, fenceMarginMs: 1500 }),
        );
      }
      const loop = (async () => {
        while (running) {
          for (const ids of holders) {
            try {
              issued.push(ids.next());
            } catch (error) {
              refusals.push((error as { reason?: string }).reason ?? String(error));
            }
          }
          await sleep(2);
        }
      })();
      await sleep(500);
      await primary.restart();
      // Longer than the fence (ttl - margin after the last confirmed renewal), shorter than the Sentinels' refresh.
      await sleep(6 * TTL);
      running = false;
      await loop;
      expect(refusals).toEqual([]);
      expect(new Set(issued).size).toBe(issued.length);
      for (const ids of holders) expect(ids.status().lease!.state).toBe('held');
    } finally {
      running = false;
      await Promise.all(sentinels.map((sentinel) => sentinel.stop()));
    }
  }, 60_000);

  it('issues no duplicate across a Sentinel failover with replica acknowledgement on', async () => {
    const primary = await RedisServer.start();
    servers.push(primary);
    const replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
    servers.push(replica);
    await waitFor('replica sync', () => replicaInSync(primary, 1));
    const sentinel = await startSentinel(primary.port);
    await settledNamespace(primary.url, 'failover');

    const holders: IdService[] = [];
    const generator = issueInBackground(holders, 50);
    const { issued } = generator;
    try {
      for (let i = 0; i < 3; i++) {
        holders.push(
          await bootThroughSentinel(sentinel.port, {
            namespace: 'failover',
            ttlMs: TTL,
            waitForReplicas: 1,
            waitForReplicasTimeoutMs: 300,
          }),
        );
      }

      await sleep(500);
      const beforeFailover = issued.length;
      await primary.stop();
      // Sentinel promotes the replica; the old primary comes back empty as a replica of the new one.
      await waitFor('failover', promoted(replica));
      const restored = await RedisServer.start({
        port: primary.port,
        args: ['--replicaof', '127.0.0.1', String(replica.port)],
      });
      servers.push(restored);
      // Sentinel reconfigures the returning server too, and its REPLICAOF can race the one given at start and leave it
      // without a link; as an operator would, the test points it at the new primary again while it is not in sync.
      const kick = new Redis(restored.url, { lazyConnect: true });
      kick.on('error', () => undefined);
      let kickedAt = Date.now();
      await waitFor(
        'new replica sync',
        async () => {
          if (await replicaInSync(replica, 1)) return true;
          if (Date.now() - kickedAt > 5000) {
            kickedAt = Date.now();
            await kick.replicaof('127.0.0.1', replica.port).catch(() => undefined);
          }
          return false;
        },
        60_000,
      );
      kick.disconnect();
      const afterFailover = issued.length;
      // Settling (12 s) after the promoted replica's first script, a TTL and the claims: about 15 s here, more on a
      // machine busy with other test files (20 s ran out twice there).
      await waitFor('every holder issuing again', async () => holders.every((ids) => ids.status().ready), 30_000);
      await sleep(500);
      await generator.stop();

      expect(beforeFailover).toBeGreaterThan(0);
      expect(issued.length).toBeGreaterThan(afterFailover);
      expect(new Set(issued).size).toBe(issued.length);
      const workers = new Set(holders.map((ids) => ids.workerId));
      expect(workers.size).toBe(3);
    } finally {
      await generator.stop();
      await sentinel.stop();
    }
  }, 120_000);

  it('issues no duplicate across a Sentinel failover to a replica that missed the last claims', async () => {
    // No replica acknowledgement here. The replica's link is held while a claim goes to the primary, then the primary
    // dies and Sentinel promotes the replica without that claim: its cursor points at an ID a live process holds.
    // The new Redis process (a new run_id) makes the namespace settle, so no one gets that ID meanwhile.
    const ttlMs = 4000;
    const primary = await RedisServer.start();
    servers.push(primary);
    const link = await startLink(primary.port);
    const replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(link.port)] });
    servers.push(replica);
    await waitFor('replica sync', () => replicaInSync(primary, 1));
    const sentinel = await startSentinel(primary.port);
    // Started settled: the test must reach the held link before a Sentinel's INFO refresh (every 10 s) points the
    // replica at the primary directly.
    await settledNamespace(primary.url, 'missed');

    const holders: IdService[] = [];
    const generator = issueInBackground(holders, 50);
    const { issued } = generator;
    const bootHolder = async (redis: Record<string, unknown> = {}) => {
      holders.push(await bootThroughSentinel(sentinel.port, { namespace: 'missed', ttlMs, ...redis }));
    };
    const cursorOn = async (server: RedisServer) => {
      const client = new Redis(server.url);
      try {
        return await client.get('snowflake:{missed:dc0}:cursor');
      } finally {
        client.disconnect();
      }
    };
    try {
      await bootHolder();
      await bootHolder();
      await waitFor('the claims on the replica', async () => (await cursorOn(replica)) === '2');

      link.hold();
      // Claims ID 2 on the primary only. It renews slowly, so that it still issues under ID 2 for a while after the
      // failover, when the next process claims.
      await bootHolder({ renewIntervalMs: 1500, retryBackoffMs: 1500 });
      expect(holders[2].workerId).toBe(2);
      await sleep(300);
      await primary.stop();
      await waitFor('failover', promoted(replica));
      expect(await cursorOn(replica)).toBe('2'); // the claim of ID 2 never reached it

      await waitFor('the Sentinel to end the failover', sentinelNames(sentinel.port, replica), 30_000);
      await bootHolder(); // after the failover: waits for the namespace to settle, then takes a free ID
      await waitFor('every holder issuing again', async () => holders.every((ids) => ids.status().ready), 30_000);
      await sleep(500);
      await generator.stop();

      expect(new Set(issued).size).toBe(issued.length);
      expect(issued.some((id) => holders[0].decode(id).workerId === 2)).toBe(true);
      expect(new Set(holders.map((ids) => ids.workerId)).size).toBe(4);
    } finally {
      await generator.stop();
      await sentinel.stop();
      await link.close();
    }
  }, 60_000);

  it('issues no duplicate in a split brain: the old primary cut off from the Sentinels and its replica, still reached by its holders', async () => {
    // The Sentinel and the replica reach the primary through relays that the test cuts; the holders reach it
    // directly (ioredis natMap maps the address Sentinel announces to the primary's own port). Once cut, Sentinel
    // promotes the replica, and the old primary goes on accepting the holders' renewals. Each renewal counts only
    // when a majority of the Sentinels confirm the Redis process that answered as the master: the holders fence,
    // reconnect to the promoted replica, and take their IDs back there or claim anew; nobody issues under an ID the
    // promoted side hands out.
    const ttlMs = 4000;
    const layout = { ...LAYOUT, workerBits: 2 };
    const primary = await RedisServer.start();
    servers.push(primary);
    const replicaLink = await startLink(primary.port);
    const sentinelLink = await startLink(primary.port);
    const replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(replicaLink.port)] });
    servers.push(replica);
    await waitFor('replica sync', () => replicaInSync(primary, 1));
    const sentinel = await startSentinel(sentinelLink.port);
    const sentinelClient = new Redis({ port: sentinel.port, host: '127.0.0.1' });
    clients.push(sentinelClient);
    // Sentinel learns the primary's run_id from its first INFO; renewals are confirmed against it.
    await waitFor('Sentinel to know the primary', async () => {
      const fields = (await sentinelClient.call('SENTINEL', 'MASTER', 'main')) as string[];
      return fields[fields.indexOf('runid') + 1]?.length === 40;
    });
    const natMap = { [`127.0.0.1:${sentinelLink.port}`]: { host: '127.0.0.1', port: primary.port } };
    await settledNamespace(primary.url, 'split');
    const warnings: string[] = [];
    const logger = new (class extends ConsoleLogger {
      override warn(message: unknown) {
        warnings.push(String(message));
      }
    })();
    logger.setLogLevels(['error', 'warn']);
    const holders: IdService[] = [];
    const generator = issueInBackground(holders, 50);
    const { issued } = generator;
    const boot = (redisOptions: Record<string, unknown> = {}) =>
      bootThroughSentinel(sentinel.port, { namespace: 'split', ttlMs, ...redisOptions }, { layout, natMap, logger });
    try {
      holders.push(await boot());
      holders.push(await boot());
      const oldIds = holders.map((ids) => ids.workerId);
      await sleep(800);
      const beforeCut = issued.length;

      replicaLink.hold();
      sentinelLink.hold();
      await waitFor('failover', promoted(replica), 30_000);
      // The old primary still answers its holders, and still believes it is the master.
      const old = new Redis(primary.url);
      clients.push(old);
      expect(await old.info('replication')).toMatch(/role:master/);

      // A newcomer finds the promoted replica once the Sentinel names it; after settling it hands out an ID.
      await waitFor('the Sentinel to name the promoted replica', async () => {
        const [, port] = (await sentinelClient.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'main')) as string[];
        return Number(port) === replica.port;
      });
      holders.push(await boot({ bootstrapAttempts: 20 }));
      await sleep(ttlMs);
      await generator.stop();

      expect(beforeCut).toBeGreaterThan(0);
      expect(new Set(issued).size).toBe(issued.length);
      expect(new Set(holders.map((ids) => ids.workerId)).size).toBe(3);
      expect(warnings.some((w) => /Sentinels of "main" name another master|is not confirmed/.test(w))).toBe(true);
      // The holders left the old primary: every one now renews on the promoted replica.
      const onPromoted = new Redis(replica.url);
      clients.push(onPromoted);
      for (const workerId of holders.map((ids) => ids.workerId)) {
        expect(await onPromoted.hget(`snowflake:{split:dc0}:w:${workerId}`, 'token')).toMatch(/^[0-9a-f-]{36}$/);
      }
      expect(oldIds.length).toBe(2);
    } finally {
      await generator.stop();
      await sentinel.stop();
      await replicaLink.close();
      await sentinelLink.close();
    }
  }, 90_000);
});
