// The Redis side of a chaos run: one redis-server (plain), or a primary, two replicas and three Sentinels
// (--sentinel). Each child reaches every server through proxies of its own, so that a fault can cut one child off.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { TcpProxy } from './proxy.mjs';
import { RedisProcess, freePort, sleep, withClient } from './redis.mjs';

export const MASTER_NAME = 'chaos';

/**
 * A redis-server of its own loaded from a SAVE of `server` taken now: the stale node a rollback resyncs from. The
 * caller kills it; `temporary` holds it until then, so that nothing outlives the run.
 */
async function startStale(topology, server) {
  await server.save();
  topology.staleCount = (topology.staleCount ?? 0) + 1;
  const stale = new RedisProcess({
    name: `stale${topology.staleCount}`,
    port: await freePort(),
    dir: join(topology.dir, `stale${topology.staleCount}`),
    // Its one replica syncs at once, not after the default 5 s wait for more replicas.
    args: ['--repl-diskless-sync-delay', '0'],
  });
  copyFileSync(server.dumpFile, stale.dumpFile);
  topology.temporary.add(stale);
  await stale.start();
  return stale;
}

async function stopStale(topology, stale) {
  await stale.kill();
  topology.temporary.delete(stale);
}

/** One redis-server, and per child one proxy in front of it. */
export class PlainTopology {
  constructor(dir) {
    this.dir = dir;
    this.kind = 'plain';
    this.server = undefined;
    this.childProxies = [];
    this.temporary = new Set();
  }

  startStale(server) {
    return startStale(this, server);
  }

  stopStale(stale) {
    return stopStale(this, stale);
  }

  async start(children) {
    this.server = new RedisProcess({ name: 'redis', port: await freePort(), dir: join(this.dir, 'redis') });
    await this.server.start();
    for (let i = 0; i < children; i++) {
      const proxy = await new TcpProxy({ targetPort: this.server.port, name: `c${i}->redis` }).listen();
      this.childProxies.push([proxy]);
    }
  }

  describe() {
    return `redis-server on 127.0.0.1:${this.server.port}, one proxy per child`;
  }

  /** What the child needs to reach Redis. */
  connection(index) {
    return { url: this.childProxies[index][0].url };
  }

  proxiesOf(index) {
    return this.childProxies[index];
  }

  async primary() {
    return this.server;
  }

  get servers() {
    return [this.server];
  }

  async restart(server, { downMs, data }, sleepFor) {
    await server.kill();
    if (data === 'snapshot') server.restoreSnapshot();
    else server.forgetData();
    await sleepFor(downMs);
    await server.start();
  }

  /** Everything back up, nothing held. */
  async heal() {
    for (const proxies of this.childProxies) for (const proxy of proxies) proxy.clear();
    if (!this.server.running) await this.server.start();
  }

  async stop() {
    for (const proxies of this.childProxies) for (const proxy of proxies) await proxy.close();
    for (const stale of this.temporary) await stale.kill();
    await this.server?.kill();
  }

  pids() {
    return [this.server?.pid, ...[...this.temporary].map((p) => p.pid)].filter(Boolean);
  }
}

/**
 * A primary and two replicas, watched by three Sentinels (quorum 2, down after 500 ms). Every server is reached by
 * the Sentinels and the other servers only through an "infrastructure" proxy of its own, and announces that proxy's
 * address (`replica-announce-port`), so the addresses Sentinel hands out are those proxies: cutting one cuts the
 * server off from the Sentinels and replicas while the children, through their own proxies, still reach it (a split
 * brain). The children's ioredis `natMap` routes each announced address to the child's own proxy for that server.
 */
export class SentinelTopology {
  constructor(dir) {
    this.dir = dir;
    this.kind = 'sentinel';
    this.redis = [];
    this.infra = [];
    this.sentinels = [];
    this.childProxies = [];
    this.temporary = new Set();
  }

  startStale(server) {
    return startStale(this, server);
  }

  stopStale(stale) {
    return stopStale(this, stale);
  }

  async start(children) {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (let i = 0; i < 3; i++) {
      this.infra.push(await new TcpProxy({ targetPort: ports[i], name: `infra->r${i}` }).listen());
    }
    for (let i = 0; i < 3; i++) {
      const server = new RedisProcess({
        name: `r${i}`,
        port: ports[i],
        dir: join(this.dir, `r${i}`),
        args: ['--replica-announce-ip', '127.0.0.1', '--replica-announce-port', String(this.infra[i].port)],
      });
      this.redis.push(server);
      await server.start(i === 0 ? [] : ['--replicaof', '127.0.0.1', String(this.infra[0].port)]);
    }
    await this.waitFor('both replicas in sync', async () => {
      const info = await withClient(this.redis[0].port, (c) => c.info('replication'));
      return /connected_slaves:2/.test(info) && (info.match(/state=online/g) ?? []).length === 2;
    });
    for (let i = 0; i < 3; i++) {
      const sentinel = new RedisProcess({
        name: `s${i}`,
        port: await freePort(),
        dir: join(this.dir, `s${i}`),
        sentinel: [
          'bind 127.0.0.1',
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${this.infra[0].port} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 500`,
          `sentinel failover-timeout ${MASTER_NAME} 2000`,
          `sentinel parallel-syncs ${MASTER_NAME} 2`,
        ],
      });
      await sentinel.start();
      this.sentinels.push(sentinel);
    }
    await this.waitFor('the Sentinels to know each other and both replicas', async () => {
      const replies = await Promise.all(
        this.sentinels.map((s) =>
          withClient(s.port, (c) => c.call('SENTINEL', 'MASTER', MASTER_NAME)).catch(() => undefined),
        ),
      );
      return replies.every((reply) => {
        if (!Array.isArray(reply)) return false;
        const fields = toObject(reply);
        return Number(fields['num-other-sentinels']) === 2 && Number(fields['num-slaves']) === 2;
      });
    });
    for (let c = 0; c < children; c++) {
      const proxies = [];
      for (let i = 0; i < 3; i++) {
        proxies.push(await new TcpProxy({ targetPort: this.redis[i].port, name: `c${c}->r${i}` }).listen());
      }
      this.childProxies.push(proxies);
    }
  }

  describe() {
    return (
      `primary r0 and replicas r1, r2 on ${this.redis.map((r) => r.port).join(', ')}; ` +
      `Sentinels on ${this.sentinels.map((s) => s.port).join(', ')} (quorum 2, down after 500 ms)`
    );
  }

  connection(index) {
    const natMap = {};
    for (let i = 0; i < 3; i++) {
      const to = { host: '127.0.0.1', port: this.childProxies[index][i].port };
      natMap[`127.0.0.1:${this.infra[i].port}`] = to;
      natMap[`127.0.0.1:${this.redis[i].port}`] = to;
    }
    return {
      sentinel: {
        name: MASTER_NAME,
        sentinels: this.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
        natMap,
      },
    };
  }

  proxiesOf(index) {
    return this.childProxies[index];
  }

  get servers() {
    return this.redis;
  }

  /** The server a majority of the Sentinels name as the master. */
  async primary() {
    const votes = new Map();
    for (const sentinel of this.sentinels) {
      const reply = await withClient(sentinel.port, (c) =>
        c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME),
      ).catch(() => undefined);
      if (!Array.isArray(reply)) continue;
      const port = Number(reply[1]);
      const index = this.infra.findIndex((p) => p.port === port);
      const server = this.redis[index >= 0 ? index : this.redis.findIndex((r) => r.port === port)];
      if (server !== undefined) votes.set(server, (votes.get(server) ?? 0) + 1);
    }
    const [best] = [...votes.entries()].sort((a, b) => b[1] - a[1]);
    if (best === undefined || best[1] < 2) throw new Error('no master confirmed by a majority of the Sentinels');
    return best[0];
  }

  /** Waits until a majority of the Sentinels name another master than `old`; returns it. */
  async promotedAfter(old, timeoutMs = 20_000) {
    let promoted;
    await this.waitFor(
      `a Sentinel failover away from ${old.name}`,
      async () => {
        promoted = await this.primary().catch(() => undefined);
        return promoted !== undefined && promoted !== old;
      },
      timeoutMs,
    );
    return promoted;
  }

  async restart(server, { downMs, data }, sleepFor) {
    await server.kill();
    if (data === 'snapshot') server.restoreSnapshot();
    else server.forgetData();
    await sleepFor(downMs);
    await server.start();
  }

  /** Kills the primary, waits for the Sentinels to promote a replica, later restarts the old one as its replica. */
  async failover({ downMs }, sleepFor, note) {
    const old = await this.primary();
    await old.kill();
    old.forgetData();
    note(`killed primary ${old.name} (kill -9)`);
    const promoted = await this.promotedAfter(old);
    note(`Sentinels promoted ${promoted.name}`);
    await sleepFor(downMs);
    await old.start(['--replicaof', '127.0.0.1', String(this.infra[this.redis.indexOf(promoted)].port)]);
    note(`${old.name} back as a replica of ${promoted.name}`);
  }

  /**
   * Restarts the master in place (SIGKILL, then at once the same port) with its data from a SAVE just before, or
   * none; returns how long it did not answer and whether the Sentinels stayed with it (no failover).
   */
  async masterRestart({ data }, sleepFor, note) {
    const master = await this.primary();
    if (data === 'snapshot') await master.save();
    const from = performance.now();
    await master.kill();
    if (data !== 'snapshot') master.forgetData();
    await master.start();
    const downMs = Math.round(performance.now() - from);
    note(`${master.name} killed and back on its port ${data === 'snapshot' ? 'from a SAVE' : 'empty'} in ${downMs} ms`);
    await sleepFor(3000);
    const after = await this.primary().catch(() => undefined);
    return { master, downMs, failedOver: after !== master, after };
  }

  /** Cuts the primary off from the Sentinels and the replicas (the children still reach it), then heals. */
  async splitBrain({ holdMs, heal }, sleepFor, note) {
    const old = await this.primary();
    const infra = this.infra[this.redis.indexOf(old)];
    infra.partition();
    note(`${old.name} cut off from the Sentinels and replicas; children still reach it`);
    try {
      const promoted = await this.promotedAfter(old);
      note(`Sentinels promoted ${promoted.name} while ${old.name} still serves its clients`);
      await sleepFor(holdMs);
    } finally {
      infra.heal(heal);
    }
    note(`healed (${heal}); the Sentinels turn ${old.name} into a replica`);
  }

  async heal() {
    for (const proxy of [...this.childProxies.flat(), ...this.infra]) proxy.clear();
    const master = await this.primary().catch(() => undefined);
    for (const server of this.redis) {
      if (server.running) continue;
      const args =
        master !== undefined && master !== server
          ? ['--replicaof', '127.0.0.1', String(this.infra[this.redis.indexOf(master)].port)]
          : [];
      await server.start(args);
    }
  }

  async stop() {
    for (const proxies of this.childProxies) for (const proxy of proxies) await proxy.close();
    for (const sentinel of this.sentinels) await sentinel.kill();
    for (const proxy of this.infra) await proxy.close();
    for (const server of [...this.redis, ...this.temporary]) await server.kill();
  }

  pids() {
    return [...this.sentinels, ...this.redis, ...this.temporary].map((p) => p.pid).filter(Boolean);
  }

  async waitFor(what, check, timeoutMs = 20_000) {
    const deadline = performance.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }
}

function toObject(flat) {
  const out = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = String(flat[i + 1]);
  return out;
}
