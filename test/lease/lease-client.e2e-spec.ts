/**
 * What the lease's own Redis client sends, seen by a real redis-server's MONITOR: no handshake before the first
 * script (no `HELLO`, no ready-check `INFO`, no `CLIENT SETINFO`), each script by its digest once the server knows
 * it, and its body only after `NOSCRIPT` (a server that never ran it, or flushed its scripts).
 */
import { Redis } from 'ioredis';
import { IdService } from '../../lib/module/id.service.js';
import { LEASE_SCRIPTS, runScript } from '../../lib/lease/redis/script-cache.js';
import { RedisServer } from '../support/redis-server.js';
import { settledNamespace } from '../support/settled-namespace.js';
import { sleep } from '../support/time.js';

/** The commands each connection sent (by its address), in order, outside scripts. */
class Monitor {
  private readonly seen: { source: string; command: string }[] = [];

  private constructor(
    private readonly base: Redis,
    private readonly client: Redis,
  ) {}

  static async start(url: string): Promise<Monitor> {
    // ioredis's monitor() opens a connection of its own beside the client it is called on.
    const base = new Redis(url);
    const client = await base.monitor();
    const monitor = new Monitor(base, client);
    client.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') monitor.seen.push({ source, command: String(args[0]).toUpperCase() });
    });
    return monitor;
  }

  /** The commands of every connection but `except`'s, by connection. */
  bySource(except: string[] = []): Map<string, string[]> {
    const found = new Map<string, string[]>();
    for (const { source, command } of this.seen) {
      if (except.includes(source)) continue;
      found.set(source, [...(found.get(source) ?? []), command]);
    }
    return found;
  }

  clear(): void {
    this.seen.length = 0;
  }

  stop(): void {
    this.client.disconnect();
    this.base.disconnect();
  }
}

/** The address MONITOR names a connection by. */
async function addressOf(client: Redis): Promise<string> {
  const id = await client.client('ID');
  const line = String(await client.client('LIST', 'ID', String(id)));
  return /addr=(\S+)/.exec(line)![1];
}

describe("the lease's Redis client (real redis-server)", () => {
  let server: RedisServer;
  let admin: Redis;
  let monitor: Monitor;
  let namespaceCounter = 0;

  beforeAll(async () => {
    server = await RedisServer.start();
    admin = new Redis(server.url);
  });
  beforeEach(async () => {
    monitor = await Monitor.start(server.url);
  });
  afterEach(() => monitor.stop());
  afterAll(async () => {
    admin.disconnect();
    await server.dispose();
  });

  async function boot(namespace: string): Promise<IdService> {
    const ids = new IdService({ redis: { url: server.url, namespace, ttlMs: 1000 } });
    await ids.onModuleInit();
    return ids;
  }

  it('boots without a handshake: the first command is the claim, by digest, and a cold server gets the body once', async () => {
    await admin.script('FLUSH');
    const namespace = `client-${++namespaceCounter}`;
    await settledNamespace(admin, namespace);
    await sleep(50);
    const adminAddress = await addressOf(admin);
    monitor.clear();

    const first = await boot(namespace);
    const second = await boot(namespace);
    await sleep(50);
    const connections = [...monitor.bySource([adminAddress]).values()];
    await first.onApplicationShutdown();
    await second.onApplicationShutdown();

    expect(connections).toHaveLength(2);
    const [cold, warm] = connections;
    // The server never ran the claim script: its digest is refused (NOSCRIPT), the body follows once.
    expect(cold.slice(0, 2)).toEqual(['EVALSHA', 'EVAL']);
    // The second instance finds it loaded: digests only, from its first command on.
    expect(warm.every((command) => command === 'EVALSHA')).toBe(true);
    for (const commands of connections) {
      expect(commands).not.toContain('HELLO');
      expect(commands).not.toContain('INFO');
      expect(commands).not.toContain('CLIENT');
    }
    expect(first.workerId).not.toBe(second.workerId);
  });

  it('renews by digest, and after the server dropped its scripts sends the body once and keeps the lease', async () => {
    const namespace = `client-${++namespaceCounter}`;
    await settledNamespace(admin, namespace);
    const ids = await boot(namespace);
    try {
      const adminAddress = await addressOf(admin);
      await sleep(600); // a few renewals (every 250 ms)
      await admin.script('FLUSH');
      monitor.clear();
      await sleep(600);
      const commands = [...monitor.bySource([adminAddress]).values()].flat();
      // The first renewal after the flush: refused by digest, run with its body; the next ones by digest again.
      expect(commands.slice(0, 3)).toEqual(['EVALSHA', 'EVAL', 'EVALSHA']);
      expect(commands.filter((command) => command === 'EVAL')).toHaveLength(1);
      const lease = ids.status().lease!;
      expect(lease.state).toBe('held');
      expect(lease.renewalFailures).toBe(0);
      expect(await admin.script('EXISTS', LEASE_SCRIPTS.renew.sha)).toEqual([1]);
    } finally {
      await ids.onApplicationShutdown();
    }
  });

  it('sends no body after NOSCRIPT once the call was given up on: nothing of it runs out of order later', async () => {
    await admin.script('FLUSH');
    const client = new Redis(server.url);
    try {
      // Connected (ioredis's own ready check done) before the commands are counted, and only this client's.
      const clientAddress = await addressOf(client);
      monitor.clear();
      const keys = ['k:{given-up}:meta', 'k:{given-up}:cursor', 'k:{given-up}:expiry', 'k:{given-up}:w:0'];
      const args = [1000, 'contract', 'fresh', 200, 0, Date.now()];
      await expect(runScript(client, 'note', keys, args, () => false)).rejects.toThrow(/NOSCRIPT/);
      await sleep(50);
      expect(monitor.bySource().get(clientAddress)).toEqual(['EVALSHA']);
      expect(await admin.exists('k:{given-up}:meta')).toBe(0);
      // Still waited for: the body follows, and the script runs.
      await runScript(client, 'note', keys, args, () => true);
      expect(await admin.exists('k:{given-up}:meta')).toBe(1);
    } finally {
      client.disconnect();
    }
  });
});
