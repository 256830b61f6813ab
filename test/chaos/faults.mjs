// What each fault kind does. A fault runs to its end on its own (a process restarted, a partition healed, a clock
// set right); when the run ends early, `ctx.sleep` returns at once and the fault heals without its remaining wait.
import { mulberry32 } from './schedule.mjs';
import { withClient } from './redis.mjs';

/** Raised by a fault that found nothing to act on (its process down, Redis away); the run counts it as skipped. */
export class Skipped extends Error {}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function signalable(slot) {
  if (!slot.signalable) throw new Skipped(`${slot.name} is not running (${slot.state})`);
  return slot;
}

/**
 * Runs admin commands on the current primary. A primary that is down (another fault restarts it) is nothing to act
 * on: the fault is skipped rather than failed.
 */
async function onPrimary(ctx, work) {
  let server;
  try {
    server = await ctx.topology.primary();
    return await withClient(server.port, (client) => work(client, server));
  } catch (error) {
    if (/ECONNREFUSED|Connection is closed|ETIMEDOUT|no master confirmed/.test(error.message)) {
      throw new Skipped(`Redis not reachable (${server?.name ?? 'no primary'}: ${error.message})`);
    }
    throw error;
  }
}

async function deleteKeys(ctx, keys) {
  return onPrimary(ctx, async (client, server) => {
    const list = typeof keys === 'function' ? await keys(client) : keys;
    if (list.length === 0) throw new Skipped('no such key');
    const deleted = await client.del(...list);
    return `deleted ${deleted} of ${list.length} on ${server.name}: ${summarizeKeys(list, ctx.keyPrefix)}`;
  });
}

function summarizeKeys(keys, prefix) {
  const short = keys.map((k) => k.slice(prefix.length));
  return short.length <= 6 ? short.join(' ') : `${short.slice(0, 6).join(' ')} …`;
}

/**
 * Any of the namespace's keys but the meta (cursor, expiry set, records), so that the loss leaves the marker in
 * place and only the missing keys themselves can reveal it. Which ones depends on the seed and the fault only.
 */
function someKeys(ctx, fault) {
  return async (client) => {
    const keys = (await client.keys(`${ctx.keyPrefix}*`)).filter((k) => k !== `${ctx.keyPrefix}meta`).sort();
    const rng = mulberry32(ctx.seed ^ Math.imul(fault.id, 0x9e3779b1));
    const chosen = keys.filter(() => rng() < fault.fraction);
    if (chosen.length === 0 && keys.length > 0) chosen.push(keys[Math.floor(rng() * keys.length)]);
    return chosen;
  };
}

/**
 * @type {Record<string, (fault: object, ctx: object) => Promise<string | void>>}
 * Each returns a description of what it did (logged); progress along the way goes through `ctx.note`.
 */
export const FAULTS = {
  async kill(fault, ctx) {
    const slot = signalable(ctx.slots[fault.target]);
    const pid = slot.pid;
    await slot.signal('SIGKILL');
    ctx.note(fault, `kill -9 ${slot.name} (pid ${pid}, worker ${slot.workerId}); restart in ${seconds(fault.downMs)}`);
    await ctx.sleep(fault.downMs);
    if (ctx.ending()) return 'not restarted: the run is ending';
    slot.start();
    return `${slot.name} restarted`;
  },

  async term(fault, ctx) {
    const slot = signalable(ctx.slots[fault.target]);
    const pid = slot.pid;
    await slot.signal('SIGTERM');
    ctx.note(fault, `SIGTERM ${slot.name} (pid ${pid}) stopped gracefully; restart in ${seconds(fault.downMs)}`);
    await ctx.sleep(fault.downMs);
    if (ctx.ending()) return 'not restarted: the run is ending';
    slot.start();
    return `${slot.name} restarted`;
  },

  async stop(fault, ctx) {
    const slot = signalable(ctx.slots[fault.target]);
    await slot.signal('SIGSTOP');
    ctx.note(fault, `SIGSTOP ${slot.name} (worker ${slot.workerId}) for ${seconds(fault.pauseMs)}`);
    await ctx.sleep(fault.pauseMs);
    await slot.signal('SIGCONT');
    return `SIGCONT ${slot.name}`;
  },

  async stall(fault, ctx) {
    const slot = signalable(ctx.slots[fault.target]);
    slot.stall(fault.stallMs);
    ctx.note(fault, `event loop of ${slot.name} (worker ${slot.workerId}) stalled for ${seconds(fault.stallMs)}`);
    // The stall ends by itself; waiting for it keeps the process's resource held until it has.
    await ctx.sleep(fault.stallMs);
    return `${slot.name} stall over`;
  },

  async partition(fault, ctx) {
    const proxies = ctx.topology.proxiesOf(fault.target);
    for (const proxy of proxies) proxy.partition();
    ctx.note(fault, `c${fault.target} partitioned from Redis for ${seconds(fault.holdMs)} (heal: ${fault.heal})`);
    await ctx.sleep(fault.holdMs);
    for (const proxy of proxies) proxy.heal(fault.heal);
    return `c${fault.target} healed by ${fault.heal === 'reset' ? 'reset' : 'late delivery'}`;
  },

  async latency(fault, ctx) {
    const proxies = ctx.topology.proxiesOf(fault.target);
    for (const proxy of proxies) proxy.setLatency(fault.latencyMs);
    ctx.note(fault, `c${fault.target}: ${fault.latencyMs} ms latency for ${seconds(fault.forMs)}`);
    await ctx.sleep(fault.forMs);
    for (const proxy of proxies) proxy.setLatency(0);
    return `c${fault.target}: latency off`;
  },

  async reset(fault, ctx) {
    const proxies = ctx.topology.proxiesOf(fault.target);
    const count = proxies.reduce((sum, proxy) => sum + proxy.links.size, 0);
    for (const proxy of proxies) proxy.reset();
    return `c${fault.target}: ${count} connection(s) reset`;
  },

  async 'redis-restart'(fault, ctx) {
    const server = await ctx.topology.primary();
    ctx.note(fault, `kill -9 ${server.name}, back empty in ${seconds(fault.downMs)}`);
    await ctx.topology.restart(server, { downMs: fault.downMs, data: 'empty' }, ctx.sleep);
    return `${server.name} restarted without its data`;
  },

  async 'redis-snapshot'(fault, ctx) {
    const server = await ctx.topology.primary();
    await server.takeSnapshot();
    ctx.note(fault, `SAVE on ${server.name}; rolled back to it in ${seconds(fault.restoreAfterMs)}`);
    await ctx.sleep(fault.restoreAfterMs);
    if (ctx.ending()) return 'not rolled back: the run is ending';
    await ctx.topology.restart(server, { downMs: fault.downMs, data: 'snapshot' }, ctx.sleep);
    return `${server.name} restarted from the snapshot taken ${seconds(fault.restoreAfterMs)} earlier (down ${seconds(fault.downMs)})`;
  },

  async flushall(fault, ctx) {
    return onPrimary(ctx, async (client, server) => {
      await client.flushall();
      return `FLUSHALL on ${server.name}`;
    });
  },

  async 'del-all'(fault, ctx) {
    return deleteKeys(ctx, (client) => client.keys(`${ctx.keyPrefix}*`));
  },

  async 'del-cursor'(fault, ctx) {
    return deleteKeys(ctx, [`${ctx.keyPrefix}cursor`]);
  },

  async 'del-expiry'(fault, ctx) {
    return deleteKeys(ctx, [`${ctx.keyPrefix}expiry`]);
  },

  async 'del-meta'(fault, ctx) {
    return deleteKeys(ctx, [`${ctx.keyPrefix}meta`]);
  },

  async 'del-records'(fault, ctx) {
    return deleteKeys(ctx, async (client) => {
      const records = (await client.keys(`${ctx.keyPrefix}w:*`)).sort();
      // Which records go depends on the seed and the fault only, so that a replay deletes the same ones when the
      // same records exist.
      const rng = mulberry32(ctx.seed ^ Math.imul(fault.id, 0x9e3779b1));
      const chosen = records.filter(() => rng() < fault.fraction);
      if (chosen.length === 0 && records.length > 0) chosen.push(records[Math.floor(rng() * records.length)]);
      return chosen;
    });
  },

  async 'del-some'(fault, ctx) {
    return deleteKeys(ctx, someKeys(ctx, fault));
  },

  async 'del-claim'(fault, ctx) {
    // A live holder learns that its record is gone at its next renewal; a claim that lands before it is the race
    // that decides whether a partial loss is read as "free". Timing the claim right after the deletion runs it.
    const slot = signalable(ctx.slots[fault.target]);
    await slot.signal('SIGTERM');
    slot.start({ gate: true });
    if (!(await slot.waitFor('loaded', 15_000))) throw new Skipped(`${slot.name} did not load in time`);
    let detail;
    try {
      detail = await deleteKeys(ctx, async (client) => [
        ...new Set([`${ctx.keyPrefix}cursor`, ...(await someKeys(ctx, fault)(client))]),
      ]);
    } finally {
      slot.go();
    }
    return `${detail}; ${slot.name} restarted and claims at once`;
  },

  async 'clock-back'(fault, ctx) {
    const slot = ctx.slots[fault.target];
    slot.stepClock(fault.stepMs);
    ctx.note(fault, `${slot.name}'s wall clock stepped ${fault.stepMs} ms, for ${seconds(fault.forMs)}`);
    await ctx.sleep(fault.forMs);
    slot.stepClock(0);
    return `${slot.name}'s wall clock set right (+${-fault.stepMs} ms)`;
  },

  async 'clock-forward'(fault, ctx) {
    const slot = ctx.slots[fault.target];
    slot.stepClock(fault.stepMs);
    ctx.note(fault, `${slot.name}'s wall clock stepped +${fault.stepMs} ms, for ${seconds(fault.forMs)}`);
    await ctx.sleep(fault.forMs);
    slot.stepClock(0);
    return `${slot.name}'s wall clock set right (-${fault.stepMs} ms)`;
  },

  async 'clock-loss'(fault, ctx) {
    const slot = ctx.slots[fault.target];
    const server = await ctx.topology.primary();
    if (fault.loss === 'snapshot') await server.takeSnapshot();
    slot.stepClock(fault.stepMs);
    ctx.note(fault, `${slot.name}'s wall clock stepped ${fault.stepMs} ms, for ${seconds(fault.forMs)}`);
    await ctx.sleep(fault.forMs);
    slot.stepClock(0);
    ctx.note(fault, `${slot.name}'s wall clock set right; ${fault.loss} in ${seconds(fault.lossAfterMs)}`);
    await ctx.sleep(fault.lossAfterMs);
    if (ctx.ending()) return 'no data loss: the run is ending';
    if (fault.loss === 'flushall') {
      return onPrimary(ctx, async (client, primary) => {
        await client.flushall();
        return `FLUSHALL on ${primary.name}`;
      });
    }
    const data = fault.loss === 'snapshot' ? 'snapshot' : 'empty';
    await ctx.topology.restart(server, { downMs: 200, data }, ctx.sleep);
    return `${server.name} restarted ${data === 'snapshot' ? 'from the snapshot taken before the step' : 'empty'}`;
  },

  async skew(fault, ctx) {
    const slot = signalable(ctx.slots[fault.target]);
    await slot.signal('SIGTERM');
    slot.skewMs = fault.skewMs;
    slot.writeClock();
    slot.start();
    ctx.note(fault, `${slot.name} restarted with its clock ${fault.skewMs} ms off, for ${seconds(fault.forMs)}`);
    await ctx.sleep(fault.forMs);
    slot.skewMs = 0;
    slot.writeClock();
    if (ctx.ending() || !slot.signalable) return `${slot.name}'s clock set right (no restart)`;
    await slot.signal('SIGTERM');
    slot.start();
    return `${slot.name} restarted with its clock right`;
  },

  async failover(fault, ctx) {
    await ctx.topology.failover(fault, ctx.sleep, (message) => ctx.note(fault, message));
    return 'failover done';
  },

  async 'split-brain'(fault, ctx) {
    await ctx.topology.splitBrain(fault, ctx.sleep, (message) => ctx.note(fault, message));
    return 'split brain healed';
  },
};

/** A one-line description of a scheduled fault's parameters, for the log. */
export function describeFault(fault) {
  const { kind, target } = fault;
  const target_ = target === null ? '' : ` c${target}`;
  const rest = Object.entries(fault)
    .filter(([k]) => !['id', 'at', 'kind', 'target'].includes(k))
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return `${kind}${target_}${rest === '' ? '' : ` (${rest})`}`;
}
