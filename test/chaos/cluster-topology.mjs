// The Redis side of the chaos run's Cluster profile: six redis-server processes in cluster mode, three primaries
// with one replica each, on free loopback ports, and the faults that only a Cluster has.
//
// Each node announces two proxies instead of its own ports (`cluster-announce-port`, `cluster-announce-bus-port`):
// - its "client" proxy: the address CLUSTER SLOTS hands out. The children's ioredis `natMap` maps it back to the
//   node's real port, so the only traffic through it is replication (a replica connects to its primary's announced
//   address). Holding it holds the replication stream: the replica lags while the primary still serves its clients.
// - its "bus" proxy (the cluster bus, port + 10000 by default, set here with `cluster-port`): every other node
//   reaches it through there. Each node sends from a source address of its own (`bind-source-addr` 127.0.0.10+i),
//   so a bus proxy can tell which node a connection comes from, and cutting one node off the bus holds its inbound
//   links and its outbound links on every other node's proxy: a primary cut from the majority while its clients,
//   who reach its real port, still reach it.
import { join } from 'node:path';
import { TcpProxy } from './proxy.mjs';
import { RedisProcess, freePort, sleep, withClient } from './redis.mjs';

const SLOTS = 16384;

/** A proxy that can hold the connections of chosen source addresses, also the ones they open later. */
class BusProxy extends TcpProxy {
  constructor(options) {
    super(options);
    /** Source addresses whose links are held; `'*'` holds every link. */
    this.cut = new Set();
  }

  isCut(link) {
    return this.cut.has('*') || this.cut.has(normalise(link.client.remoteAddress));
  }

  accept(client) {
    super.accept(client);
    for (const link of this.links) if (link.client === client && this.isCut(link)) link.hold();
  }

  cutOff(address) {
    this.cut.add(address);
    for (const link of this.links) if (this.isCut(link)) link.hold();
  }

  /** Ends every cut; the held links are reset (a healed network whose connections timed out meanwhile). */
  restore() {
    this.cut.clear();
    for (const link of [...this.links]) if (link.held) link.destroy();
  }
}

function normalise(address = '') {
  return address.replace(/^::ffff:/, '');
}

/** One line of CLUSTER NODES. */
function parseNodeLine(line) {
  const [id, addr, flags, master, , , epoch, link, ...slots] = line.trim().split(' ');
  return { id, addr, flags: flags.split(','), master, epoch: Number(epoch), link, slots };
}

function ownsSlot(slots, slot) {
  return slots.some((range) => {
    if (range.startsWith('[')) return false;
    const [low, high = low] = range.split('-').map(Number);
    return slot >= low && slot <= high;
  });
}

export class ClusterTopology {
  /**
   * @param {string} dir
   * @param {{ nodeTimeoutMs: number, log: (line: string) => void }} options
   */
  constructor(dir, { nodeTimeoutMs, log }) {
    this.dir = dir;
    this.kind = 'cluster';
    this.nodeTimeoutMs = nodeTimeoutMs;
    this.log = log;
    /** @type {{ index: number, name: string, server: RedisProcess, client: TcpProxy, bus: BusProxy, source: string, id?: string }[]} */
    this.nodes = [];
  }

  async start() {
    for (let i = 0; i < 6; i++) {
      const port = await freePort();
      const busPort = await freePort();
      const client = await new TcpProxy({ targetPort: port, name: `announce->n${i}` }).listen();
      const bus = await new BusProxy({ targetPort: busPort, name: `bus->n${i}` }).listen();
      const source = `127.0.0.${10 + i}`;
      const server = new RedisProcess({
        name: `n${i}`,
        port,
        dir: join(this.dir, `n${i}`),
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(this.dir, `n${i}`, 'nodes.conf'),
          '--cluster-node-timeout',
          String(this.nodeTimeoutMs),
          '--cluster-port',
          String(busPort),
          '--cluster-announce-ip',
          '127.0.0.1',
          '--cluster-announce-port',
          String(client.port),
          '--cluster-announce-bus-port',
          String(bus.port),
          '--bind-source-addr',
          source,
          // A replica that lost its link a while ago may still be promoted: the lagging-replica fault needs one.
          '--cluster-replica-validity-factor',
          '0',
          '--repl-diskless-sync',
          'yes',
          '--repl-diskless-sync-delay',
          '0',
        ],
      });
      await server.start();
      this.nodes.push({ index: i, name: `n${i}`, server, client, bus, source });
    }
    for (const node of this.nodes) node.id = String(await this.admin(node, (c) => c.call('CLUSTER', 'MYID')));
    const third = Math.floor(SLOTS / 3);
    const ranges = [
      [0, third - 1],
      [third, 2 * third - 1],
      [2 * third, SLOTS - 1],
    ];
    for (let i = 0; i < 3; i++) {
      await this.admin(this.nodes[i], async (c) => {
        await c.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
        await c.call('CLUSTER', 'ADDSLOTSRANGE', ...ranges[i]);
      });
    }
    for (const node of this.nodes.slice(1)) {
      await this.admin(this.nodes[0], (c) => c.call('CLUSTER', 'MEET', '127.0.0.1', node.client.port, node.bus.port));
    }
    await this.waitFor('every node to know the five others', async () => {
      for (const node of this.nodes) {
        const lines = await this.nodesView(node);
        if (lines.length !== 6 || lines.some((l) => l.flags.includes('handshake') || l.flags.includes('noaddr'))) {
          return false;
        }
      }
      return true;
    });
    for (let i = 3; i < 6; i++) {
      await this.admin(this.nodes[i], (c) => c.call('CLUSTER', 'REPLICATE', this.nodes[i - 3].id));
    }
    await this.waitHealthy('the cluster to form');
  }

  describe() {
    return (
      `Redis Cluster: primaries n0-n2 on ${this.nodes
        .slice(0, 3)
        .map((n) => n.server.port)
        .join(', ')}, ` +
      `replicas n3-n5 on ${this.nodes
        .slice(3)
        .map((n) => n.server.port)
        .join(', ')}, cluster-node-timeout ${this.nodeTimeoutMs} ms`
    );
  }

  /** What a child needs: the startup nodes and the map from announced addresses to real ports. */
  connection() {
    const natMap = {};
    for (const node of this.nodes)
      natMap[`127.0.0.1:${node.client.port}`] = { host: '127.0.0.1', port: node.server.port };
    return {
      cluster: {
        startupNodes: this.nodes.map((n) => ({ host: '127.0.0.1', port: n.server.port })),
        natMap,
      },
    };
  }

  admin(node, work) {
    return withClient(node.server.port, work);
  }

  async nodesView(node) {
    const text = String(await this.admin(node, (c) => c.call('CLUSTER', 'NODES')));
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(parseNodeLine);
  }

  nodeById(id) {
    return this.nodes.find((n) => n.id === id);
  }

  async slotOf(key) {
    return Number(await this.admin(this.nodes[0], (c) => c.call('CLUSTER', 'KEYSLOT', key)));
  }

  /**
   * The primary serving `slot`, as the nodes `among` see themselves: a node that says of itself that it is a master
   * and owns the slot; during a split brain two may, and the higher config epoch wins.
   */
  async ownerOf(slot, among = this.nodes) {
    let best;
    for (const node of among) {
      if (!node.server.running) continue;
      const self = await this.nodesView(node)
        .then((lines) => lines.find((l) => l.flags.includes('myself')))
        .catch(() => undefined);
      if (self === undefined || !self.flags.includes('master') || !ownsSlot(self.slots, slot)) continue;
      if (best === undefined || self.epoch > best.epoch) best = { node, epoch: self.epoch };
    }
    return best?.node;
  }

  /** A replica of `primary` whose link to it is up (as the replica sees it). */
  async replicaOf(primary) {
    for (const node of this.nodes) {
      if (node === primary || !node.server.running) continue;
      const info = await this.admin(node, (c) => c.info('replication')).catch(() => '');
      const self = (await this.nodesView(node).catch(() => [])).find((l) => l.flags.includes('myself'));
      if (self?.master === primary.id && /master_link_status:up/.test(info)) return node;
    }
    return undefined;
  }

  /** Every node up, every node's cluster_state ok, three primaries with a replica in sync each. */
  async healthy() {
    for (const node of this.nodes) {
      if (!node.server.running) return false;
      const info = String(await this.admin(node, (c) => c.call('CLUSTER', 'INFO')));
      if (!info.includes('cluster_state:ok')) return false;
    }
    const view = await this.nodesView(this.nodes[0]);
    const primaries = view.filter((l) => l.flags.includes('master') && !l.flags.includes('fail') && l.slots.length > 0);
    if (primaries.length !== 3) return false;
    for (const line of primaries) {
      const replica = await this.replicaOf(this.nodeById(line.id));
      if (replica === undefined) return false;
    }
    return true;
  }

  waitHealthy(what, timeoutMs = 60_000) {
    return this.waitFor(what, () => this.healthy(), timeoutMs);
  }

  /**
   * Waits until a node other than `old` serves `slot` as the majority (every node but `old`) sees it, and answers
   * as a master with cluster_state ok; returns it.
   */
  async promotedAfter(old, slot, timeoutMs = 30_000) {
    let promoted;
    const others = this.nodes.filter((n) => n !== old);
    await this.waitFor(
      `a replica promoted in place of ${old.name}`,
      async () => {
        promoted = await this.ownerOf(slot, others);
        if (promoted === undefined) return false;
        const info = String(await this.admin(promoted, (c) => c.call('CLUSTER', 'INFO')));
        return info.includes('cluster_state:ok');
      },
      timeoutMs,
      25,
    );
    return promoted;
  }

  /**
   * Waits until no node but `old` names it in its map of the slots (CLUSTER SLOTS), the map a new client reads: a
   * client that finds a paused node there connects to it, and its ready check may wait on it for ever.
   */
  async leftOutOfSlots(old, timeoutMs = 20_000) {
    const others = this.nodes.filter((n) => n !== old && n.server.running);
    await this.waitFor(
      `every node to leave ${old.name} out of its map of the slots`,
      async () => {
        for (const node of others) {
          const slots = await this.admin(node, (c) => c.call('CLUSTER', 'SLOTS'));
          if (JSON.stringify(slots).includes(old.id)) return false;
        }
        return true;
      },
      timeoutMs,
    );
  }

  async replOffset(node) {
    const info = await this.admin(node, (c) => c.info('replication'));
    const field = /slave_repl_offset:(\d+)/.exec(info) ?? /master_repl_offset:(\d+)/.exec(info);
    return field === null ? null : Number(field[1]);
  }

  /** Cuts `node` off the cluster bus both ways; its clients still reach it. */
  cutFromBus(node) {
    node.bus.cutOff('*');
    for (const other of this.nodes) if (other !== node) other.bus.cutOff(node.source);
  }

  restoreBus() {
    for (const node of this.nodes) node.bus.restore();
  }

  /** Everything back up, nothing held. */
  async heal() {
    this.restoreBus();
    for (const node of this.nodes) node.client.clear();
    for (const node of this.nodes) if (!node.server.running) await node.server.start();
  }

  async stop() {
    for (const node of this.nodes) {
      await node.client.close();
      await node.bus.close();
    }
    for (const node of this.nodes) await node.server.kill();
  }

  pids() {
    return this.nodes.map((n) => n.server.pid).filter(Boolean);
  }

  async waitFor(what, check, timeoutMs = 30_000, everyMs = 100) {
    const deadline = performance.now() + timeoutMs;
    while (!(await check().catch(() => false))) {
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(everyMs);
    }
  }
}
