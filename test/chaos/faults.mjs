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

/** How long del-released waits for an ID to become free (a holder to stop) when none is. */
const FREE_RECORD_WAIT_MS = 15_000;
const FILLER_VALUE_BYTES = 16 * 1024;
/** How much filler the evict fault writes at most when no namespace key goes. */
const EVICT_FILLER_BOUND_BYTES = 64 * 2 ** 20;

/**
 * KEYS[1] expiry, KEYS[2] cursor; ARGV[1] record prefix, ARGV[2] which one (any integer). Deletes the record of a
 * free ID (expiry score at or below the server's TIME, record present). Reply: {id, expiry score, now, cursor,
 * free IDs with a record} or {} when there is none.
 */
const DELETE_FREE_RECORD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local free = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES')
local found = {}
for i = 1, #free, 2 do
  if redis.call('EXISTS', ARGV[1] .. free[i]) == 1 then table.insert(found, {free[i], free[i + 1]}) end
end
if #found == 0 then return {} end
local pick = found[(tonumber(ARGV[2]) % #found) + 1]
redis.call('DEL', ARGV[1] .. pick[1])
return {pick[1], pick[2], tostring(now), redis.call('GET', KEYS[2]) or '0', #found}
`;

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

  async 'del-released'(fault, ctx) {
    // Once the cursor is spent, a claim takes the free ID that lapsed longest ago: the deletion then decides the
    // next claim's floor. Waiting for that is bounded; the deletion happens either way.
    for (let waited = 0; waited < fault.waitCursorMs && !ctx.ending(); waited += 250) {
      const cursor = await onPrimary(ctx, (client) => client.get(`${ctx.keyPrefix}cursor`)).catch(() => null);
      if (Number(cursor) >= ctx.idCount) break;
      await ctx.sleep(250);
    }
    // One script: the ID is free at the server's TIME when its record goes, never a lease a claim just took. While
    // no ID is free (every used one held, or a loss just emptied the namespace), it tries again for a while.
    const deleteOne = (client) =>
      client.eval(
        DELETE_FREE_RECORD,
        2,
        `${ctx.keyPrefix}expiry`,
        `${ctx.keyPrefix}cursor`,
        `${ctx.keyPrefix}w:`,
        fault.pick,
      );
    // A Redis made a replica for a moment by another fault (a rollback's resync) refuses writes: try again then.
    const tryDelete = (client) =>
      deleteOne(client).catch((error) => {
        if (/READONLY/.test(String(error?.message))) return [];
        throw error;
      });
    return onPrimary(ctx, async (client, server) => {
      let reply = await tryDelete(client);
      for (let waited = 0; reply.length === 0 && waited < FREE_RECORD_WAIT_MS && !ctx.ending(); waited += 500) {
        await ctx.sleep(500);
        reply = await tryDelete(client);
      }
      if (reply.length === 0) throw new Skipped(`no free ID with a record within ${seconds(FREE_RECORD_WAIT_MS)}`);
      const [id, lapsed, now, spent, free] = reply;
      ctx.result(fault, { workerId: Number(id), cursorSpent: Number(spent) >= ctx.idCount });
      return (
        `deleted w:${id} on ${server.name} (free since ${Number(now) - Number(lapsed)} ms, one of ${free} free ` +
        `with a record; cursor ${spent}/${ctx.idCount}${Number(spent) >= ctx.idCount ? ', spent' : ''})`
      );
    });
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

  async evict(fault, ctx) {
    return onPrimary(ctx, async (client, server) => {
      const before = (await client.keys(`${ctx.keyPrefix}*`)).sort();
      const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))[1]);
      const filler = `chaos-filler:${fault.id}:`;
      const value = 'x'.repeat(FILLER_VALUE_BYTES);
      let written = 0;
      let gone = [];
      const from = performance.now();
      await client.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru');
      await client.call('CONFIG', 'SET', 'maxmemory', String(used + fault.headroomKb * 1024));
      ctx.note(fault, `${server.name}: maxmemory ${used} + ${fault.headroomKb} KB, allkeys-lru; filling`);
      try {
        while (gone.length === 0 && written * FILLER_VALUE_BYTES < EVICT_FILLER_BOUND_BYTES && !ctx.ending()) {
          const batch = client.pipeline();
          for (let i = 0; i < 8; i++) batch.set(`${filler}${written++}`, value);
          await batch.exec();
          const exists = await Promise.all(before.map((key) => client.exists(key)));
          gone = before.filter((_, i) => exists[i] === 0);
          // The LRU clock ticks once a second: a pause lets the keys the scripts keep reading look younger.
          if (gone.length === 0 && written % 256 === 0) await ctx.sleep(100);
        }
      } finally {
        await client.call('CONFIG', 'SET', 'maxmemory', '0');
        await client.call('CONFIG', 'SET', 'maxmemory-policy', 'noeviction');
        for (let i = 0; i < written; i += 500) {
          const keys = [];
          for (let j = i; j < Math.min(written, i + 500); j++) keys.push(`${filler}${j}`);
          await client.unlink(...keys);
        }
      }
      ctx.result(fault, { evicted: gone.length, of: before.length, fillerBytes: written * FILLER_VALUE_BYTES });
      const mb = ((written * FILLER_VALUE_BYTES) / 2 ** 20).toFixed(1);
      return (
        `${gone.length} of ${before.length} namespace keys evicted by ${mb} MB of filler in ` +
        `${Math.round(performance.now() - from)} ms${gone.length > 0 ? `: ${summarizeKeys(gone, ctx.keyPrefix)}` : ''}; ` +
        'maxmemory 0, noeviction, filler deleted'
      );
    });
  },

  async rollback(fault, ctx) {
    const server = await ctx.topology.primary();
    // With Sentinel, REPLICAOF on the master would look like a failover to the Sentinels: a reload there.
    const via = ctx.topology.kind === 'sentinel' ? 'reload' : fault.via;
    const runIdOf = (client) => client.info('server').then((info) => /run_id:(\w+)/.exec(info)[1]);
    const replIdOf = (client) => client.info('replication').then((info) => /master_replid:(\w+)/.exec(info)[1]);
    const [runId, replId] = await withClient(server.port, async (c) => [await runIdOf(c), await replIdOf(c)]);
    let stale;
    if (via === 'reload') {
      await server.save();
      ctx.note(fault, `SAVE on ${server.name}; DEBUG RELOAD NOSAVE in ${seconds(fault.restoreAfterMs)}`);
    } else {
      stale = await ctx.topology.startStale(server);
      ctx.note(
        fault,
        `${stale.name} started from a SAVE of ${server.name}; resync from it in ${seconds(fault.restoreAfterMs)}`,
      );
    }
    try {
      await ctx.sleep(fault.restoreAfterMs);
      if (ctx.ending()) return 'not rolled back: the run is ending';
      const after = await onPrimary(ctx, async (client, primary) => {
        if (primary !== server) throw new Skipped(`the primary changed (${primary.name})`);
        if (via === 'reload') {
          await client.call('DEBUG', 'RELOAD', 'NOSAVE');
        } else {
          await client.call('REPLICAOF', '127.0.0.1', String(stale.port));
          const deadline = performance.now() + 10_000;
          while (!/master_link_status:up/.test(await client.info('replication'))) {
            if (performance.now() > deadline) {
              await client.call('REPLICAOF', 'NO', 'ONE');
              throw new Error(`${server.name} did not sync from ${stale.name} within 10 s`);
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          await client.call('REPLICAOF', 'NO', 'ONE');
        }
        return [await runIdOf(client), await replIdOf(client)];
      });
      const same = after[0] === runId;
      ctx.result(fault, { via, sameRunId: same, replIdChanged: after[1] !== replId });
      return (
        `${server.name} rolled back ${seconds(fault.restoreAfterMs)} by ` +
        `${via === 'reload' ? 'DEBUG RELOAD NOSAVE' : `REPLICAOF ${stale.name}, REPLICAOF NO ONE`}: ` +
        `run_id ${same ? 'unchanged' : 'CHANGED'}, replication ID ${after[1] !== replId ? 'changed' : 'unchanged'}`
      );
    } finally {
      if (stale !== undefined) await ctx.topology.stopStale(stale);
    }
  },

  async 'restart-config'(fault, ctx) {
    // A process that is booting is restarted once it can take the signal.
    const target = ctx.slots[fault.target];
    for (let waited = 0; !target.signalable && waited < 10_000 && !ctx.ending(); waited += 250) await ctx.sleep(250);
    const slot = signalable(target);
    const refusedBefore = slot.bootErrors.LeaseConfigMismatchError ?? 0;
    await slot.signal('SIGTERM');
    // After the exit: the stopped process's last count is in.
    const issuedBefore = slot.issued;
    const override =
      fault.setting === 'fenceMarginMs' ? { redis: { fenceMarginMs: fault.value } } : { [fault.setting]: fault.value };
    // Refused or settling by design: this process's own time without IDs is not an outage until it runs with the
    // run's settings again.
    slot.excuse(true);
    slot.configOverride = override;
    slot.start();
    ctx.note(fault, `${slot.name} restarted with ${fault.setting}=${fault.value}, for ${seconds(fault.forMs)}`);
    await ctx.sleep(fault.forMs);
    await slot.signal('SIGTERM');
    slot.configOverride = undefined;
    slot.excuse(false);
    const refused = (slot.bootErrors.LeaseConfigMismatchError ?? 0) - refusedBefore;
    const issued = slot.issued - issuedBefore;
    ctx.result(fault, { refused, issued });
    const what = `${slot.name} with ${fault.setting}=${fault.value}: refused ${refused} time(s), ${issued} IDs issued`;
    if (ctx.ending()) return `${what}; not restarted: the run is ending`;
    slot.start();
    return `${what}; restarted with the run's settings`;
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

  async 'master-restart'(fault, ctx) {
    const { master, downMs, failedOver, after } = await ctx.topology.masterRestart(fault, ctx.sleep, (message) =>
      ctx.note(fault, message),
    );
    ctx.result(fault, { downMs, failedOver });
    return failedOver
      ? `the Sentinels failed over to ${after?.name ?? 'none'} (${master.name} was away ${downMs} ms)`
      : `${master.name} still the master: no failover`;
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
