// A TCP proxy on loopback in front of one Redis server, whose traffic the chaos run can hold, delay or cut.
//
// Modes:
// - pass: bytes flow both ways;
// - partition: nothing is read from either side and nothing queued is delivered, but no socket is closed, so both
//   ends see a silent network (as a real partition looks) rather than a closed connection. `heal('resume')` delivers
//   everything held, late; `heal('reset')` destroys the held connections instead;
// - latency: every chunk is delivered `ms` later, in order;
// - reset(): destroys the current connections once (new ones pass).
import { createServer, connect } from 'node:net';

export class TcpProxy {
  /** @param {{ targetPort: number, targetHost?: string, name: string }} options */
  constructor({ targetPort, targetHost = '127.0.0.1', name }) {
    this.targetPort = targetPort;
    this.targetHost = targetHost;
    this.name = name;
    this.port = 0;
    this.partitioned = false;
    this.latencyMs = 0;
    /** @type {Set<Link>} */
    this.links = new Set();
    this.server = createServer((client) => this.accept(client));
    this.server.on('error', () => undefined);
  }

  /** Listens on the given port (0: any free one). */
  async listen(port = 0) {
    await new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.removeListener('error', reject);
        resolve();
      });
    });
    this.port = this.server.address().port;
    return this;
  }

  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Points new connections at another server (existing ones are left as they are). */
  retarget(port) {
    this.targetPort = port;
  }

  partition() {
    this.partitioned = true;
    for (const link of this.links) link.hold();
  }

  /** Ends a partition: `resume` delivers what was held, `reset` destroys the connections that were held. */
  heal(how = 'resume') {
    if (!this.partitioned) return;
    this.partitioned = false;
    for (const link of [...this.links]) {
      if (how === 'reset') link.destroy();
      else link.release();
    }
  }

  setLatency(ms) {
    this.latencyMs = Math.max(0, ms);
  }

  /** Destroys every current connection; the clients see a reset and reconnect. */
  reset() {
    for (const link of [...this.links]) link.destroy();
  }

  /** Back to pass mode, delivering anything held. */
  clear() {
    this.latencyMs = 0;
    this.heal('resume');
  }

  async close() {
    for (const link of [...this.links]) link.destroy();
    await new Promise((resolve) => this.server.close(() => resolve()));
  }

  accept(client) {
    const server = connect(this.targetPort, this.targetHost);
    const link = new Link(this, client, server);
    this.links.add(link);
    if (this.partitioned) link.hold();
  }
}

/** One client connection and its upstream connection, with an ordered delivery queue each way. */
class Link {
  constructor(proxy, client, server) {
    this.proxy = proxy;
    this.client = client;
    this.server = server;
    this.closed = false;
    this.held = false;
    this.up = new Lane(this, client, server);
    this.down = new Lane(this, server, client);
    this.closing = false;
    for (const socket of [client, server]) {
      socket.setNoDelay(true);
      socket.on('error', () => this.closed || this.end());
      socket.on('close', () => this.closed || this.end());
    }
  }

  /**
   * One side went away. Across a partition the other side must not learn it before the partition heals; otherwise
   * what the proxy still queues (latency) is delivered first, a little early, rather than lost.
   */
  end() {
    if (this.held) {
      this.closing = true;
      return;
    }
    this.up.deliverAll();
    this.down.deliverAll();
    this.destroy();
  }

  hold() {
    this.held = true;
    this.client.pause();
    this.server.pause();
  }

  release() {
    this.held = false;
    if (this.closing) {
      // What was held still reaches the side that is there, late, as a healed network delivers it; then it sees
      // the close.
      this.end();
      return;
    }
    this.client.resume();
    this.server.resume();
    this.up.flush();
    this.down.flush();
  }

  destroy() {
    if (this.closed) return;
    this.closed = true;
    this.up.clear();
    this.down.clear();
    this.client.destroy();
    this.server.destroy();
    this.proxy.links.delete(this);
  }
}

/**
 * One direction of a link. A chunk is due `latency` ms after it arrived and never before the chunk ahead of it, so
 * that a change of latency cannot reorder the stream.
 */
class Lane {
  constructor(link, from, to) {
    this.link = link;
    this.to = to;
    /** @type {{ chunk: Buffer, due: number }[]} */
    this.queue = [];
    this.lastDue = 0;
    this.timer = undefined;
    from.on('data', (chunk) => {
      const due = Math.max(performance.now() + link.proxy.latencyMs, this.lastDue);
      this.lastDue = due;
      this.queue.push({ chunk, due });
      this.flush();
    });
  }

  flush() {
    if (this.link.held || this.link.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0].due <= now) this.to.write(this.queue.shift().chunk);
    if (this.queue.length > 0) {
      this.timer = setTimeout(() => this.flush(), Math.max(1, Math.ceil(this.queue[0].due - now)));
    }
  }

  deliverAll() {
    clearTimeout(this.timer);
    if (!this.to.destroyed) for (const { chunk } of this.queue) this.to.write(chunk);
    this.queue = [];
  }

  clear() {
    clearTimeout(this.timer);
    this.queue = [];
  }
}
