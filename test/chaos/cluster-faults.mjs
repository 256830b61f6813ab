// The fault kinds of the chaos run's Cluster profile, each against the primary that serves the namespace's slot.
// Each returns what it measured: `outageMs`, how long the namespace's slot had no primary that could run the lease's
// scripts (a promotion, the split of a slot move), which report.mjs compares with the lease's proof window.
import { SETTLE_AFTER_LOSS_MS } from '../../dist/lease/lease.contract.js';
import { sleep, withClient } from './redis.mjs';

/**
 * A graceful `CLUSTER FAILOVER` on the replica: the replica catches up with its primary before it takes over, so
 * nothing is lost; the slot is unavailable only for the switch.
 */
async function failover(ctx) {
  const { topology, slot } = ctx;
  const old = await topology.ownerOf(slot);
  const replica = await topology.replicaOf(old);
  if (replica === undefined) throw new Error(`${old.name} has no replica in sync`);
  const from = performance.now();
  await topology.admin(replica, (c) => c.call('CLUSTER', 'FAILOVER'));
  const promoted = await topology.promotedAfter(old, slot);
  const outageMs = Math.round(performance.now() - from);
  ctx.note(`CLUSTER FAILOVER: ${replica.name} took over from ${old.name} in ${outageMs} ms`);
  return { outageMs, from: old.name, to: promoted.name };
}

/** The primary killed (kill -9); the cluster promotes its replica; later the old primary comes back as a replica. */
async function kill(ctx) {
  const { topology, slot } = ctx;
  const old = await topology.ownerOf(slot);
  const from = performance.now();
  await old.server.kill();
  old.server.forgetData();
  ctx.note(`killed primary ${old.name} (kill -9)`);
  const promoted = await topology.promotedAfter(old, slot);
  const outageMs = Math.round(performance.now() - from);
  ctx.note(`${promoted.name} promoted ${outageMs} ms after the kill`);
  await ctx.sleep(ctx.ttlMs);
  await old.server.start();
  ctx.note(`${old.name} back (empty), rejoining as a replica`);
  return { outageMs, from: old.name, to: promoted.name };
}

/**
 * A promoted replica that missed writes: the replication stream to the replica is held (its link stays up, silent)
 * for `holdMs` while the holders renew and claim on the primary, then the primary is killed and the held bytes are
 * dropped, so the replica that the cluster promotes never saw them.
 */
async function lag(ctx) {
  const { topology, slot } = ctx;
  const old = await topology.ownerOf(slot);
  const replica = await topology.replicaOf(old);
  if (replica === undefined) throw new Error(`${old.name} has no replica in sync`);
  old.client.partition();
  const holdMs = ctx.ttlMs / 2;
  ctx.note(`replication ${old.name} -> ${replica.name} held for ${holdMs} ms`);
  await ctx.sleep(holdMs);
  const primaryOffset = await topology.replOffset(old);
  const replicaOffset = await topology.replOffset(replica);
  const missedBytes = primaryOffset - replicaOffset;
  const from = performance.now();
  await old.server.kill();
  old.server.forgetData();
  old.client.heal('reset');
  ctx.note(`killed ${old.name}; ${replica.name} missed ${missedBytes} bytes of its writes`);
  const promoted = await topology.promotedAfter(old, slot);
  const outageMs = Math.round(performance.now() - from);
  ctx.note(`${promoted.name} promoted ${outageMs} ms after the kill`);
  await ctx.sleep(ctx.ttlMs);
  await old.server.start();
  ctx.note(`${old.name} back (empty), rejoining as a replica`);
  return { outageMs, missedBytes, from: old.name, to: promoted.name };
}

/**
 * The primary cut from the cluster bus both ways while the children still reach it; the majority promotes its
 * replica; after `holdMs` more the cut heals and the old primary turns into a replica of the new one.
 */
async function split(ctx) {
  const { topology, slot } = ctx;
  const old = await topology.ownerOf(slot);
  const from = performance.now();
  topology.cutFromBus(old);
  ctx.note(`${old.name} cut from the cluster bus; the children still reach it`);
  let promoted;
  try {
    promoted = await topology.promotedAfter(old, slot);
    const outageMs = Math.round(performance.now() - from);
    ctx.note(`${promoted.name} promoted ${outageMs} ms after the cut, while ${old.name} still serves its clients`);
    await ctx.sleep(ctx.ttlMs);
    return { outageMs, from: old.name, to: promoted.name };
  } finally {
    topology.restoreBus();
    ctx.note(`bus healed; ${old.name} turns into a replica`);
  }
}

/** How long a primary that runs again serves its clients before a message of the cluster demotes it (held here). */
const DEMOTE_AFTER_MS = 300;

/**
 * The primary paused (SIGSTOP, a VM paused) while the cluster promotes its replica and the promoted node settles and
 * hands IDs out (to a process started meanwhile, which reaches the promoted node; the others stay connected to the
 * paused one); then it runs again, cut from the cluster bus since the pause and for DEMOTE_AFTER_MS more, as a primary that reads its
 * clients' requests before a message of the cluster tells it it was demoted: it answers what waited in its sockets,
 * and what comes meanwhile, from its old data. Then the bus heals and it turns into a replica. The outage is the
 * whole pause: the children connected to it wait on it (no socket error, no MOVED) until it runs again.
 */
async function pause(ctx) {
  const { topology, slot } = ctx;
  const old = await topology.ownerOf(slot);
  const pid = old.server.pid;
  const from = performance.now();
  process.kill(pid, 'SIGSTOP');
  // Cut from the cluster bus from the pause on: what the other nodes send it meanwhile would wait in its sockets and
  // reach it first thing when it runs again, before what its clients sent.
  topology.cutFromBus(old);
  ctx.note(`SIGSTOP primary ${old.name}, cut from the cluster bus`);
  let promoted;
  try {
    promoted = await topology.promotedAfter(old, slot);
    ctx.note(`${promoted.name} promoted ${Math.round(performance.now() - from)} ms after the pause`);
    await topology.leftOutOfSlots(old);
    // A process started now reaches the promoted node, and takes an ID there once it has settled.
    const restarted = ctx.processes[ctx.random(ctx.processes.length)];
    await restarted.signal('SIGKILL');
    restarted.start();
    ctx.note(`${restarted.name} killed and started again: it reaches ${promoted.name}`);
    await ctx.sleep(SETTLE_AFTER_LOSS_MS + ctx.ttlMs);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const outageMs = Math.round(performance.now() - from);
  ctx.note(`SIGCONT ${old.name} after ${outageMs} ms, still cut from the cluster bus for ${DEMOTE_AFTER_MS} ms`);
  await ctx.sleep(DEMOTE_AFTER_MS);
  topology.restoreBus();
  ctx.note(`bus healed; ${old.name} turns into a replica`);
  await ctx.sleep(ctx.ttlMs);
  return { outageMs, from: old.name, to: promoted.name };
}

/**
 * The namespace's slot moved to another primary under load, as `redis-cli --cluster reshard --cluster-replace`
 * does: IMPORTING and MIGRATING, the keys in batches of `batch` with a pause between, each batch MIGRATEd without
 * REPLACE first (a BUSYKEY is a key written on the importing node before it moved: counted, then replaced as
 * `--cluster-replace` does), then SETSLOT NODE everywhere. Before each batch the importing node is checked for keys
 * of the slot that did not come from the move.
 */
async function migrate(ctx) {
  const { topology, slot } = ctx;
  const source = await topology.ownerOf(slot);
  const primaries = [];
  for (const node of topology.nodes) {
    if (node === source || !node.server.running) continue;
    const self = (await topology.nodesView(node)).find((l) => l.flags.includes('myself'));
    if (self.flags.includes('master') && self.slots.length > 0) primaries.push(node);
  }
  const target = primaries[ctx.random(primaries.length)];
  const moved = new Set();
  const earlyWrites = new Set();
  let busyKeys = 0;
  const errors = [];
  const from = performance.now();
  await topology.admin(target, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id));
  await topology.admin(source, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id));
  for (;;) {
    const onTarget = await topology.admin(target, (c) => c.call('CLUSTER', 'GETKEYSINSLOT', slot, 1000));
    for (const key of onTarget) if (!moved.has(key)) earlyWrites.add(key);
    const keys = await topology.admin(source, (c) => c.call('CLUSTER', 'GETKEYSINSLOT', slot, ctx.batch));
    if (keys.length === 0) break;
    const args = ['127.0.0.1', target.server.port, '', 0, 5000];
    try {
      await topology.admin(source, (c) => c.call('MIGRATE', ...args, 'KEYS', ...keys));
    } catch (error) {
      if (!/BUSYKEY/.test(error.message)) {
        errors.push(error.message);
        if (errors.length > 20) throw new Error(`MIGRATE keeps failing: ${errors.at(-1)}`, { cause: error });
        await sleep(50);
        continue;
      }
      busyKeys += 1;
      await topology.admin(source, (c) => c.call('MIGRATE', ...args, 'REPLACE', 'KEYS', ...keys));
    }
    for (const key of keys) moved.add(key);
    await ctx.sleep(ctx.pauseMs);
  }
  for (const node of [target, source, ...topology.nodes.filter((n) => n !== target && n !== source)]) {
    if (!node.server.running) continue;
    await withClient(node.server.port, (c) => c.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id)).catch(
      // A replica refuses SETSLOT; it learns the owner from its primary.
      () => undefined,
    );
  }
  const outageMs = Math.round(performance.now() - from);
  ctx.note(
    `slot ${slot} moved ${source.name} -> ${target.name}: ${moved.size} keys in batches of ${ctx.batch}, ` +
      `split ${outageMs} ms, ${earlyWrites.size} key(s) written early on ${target.name}, ${busyKeys} BUSYKEY`,
  );
  return {
    outageMs,
    from: source.name,
    to: target.name,
    keys: moved.size,
    earlyWrites: [...earlyWrites],
    busyKeys,
    migrateErrors: errors,
  };
}

export const CLUSTER_FAULTS = { failover, kill, lag, split, migrate, pause };

export const CLUSTER_FAULT_TEXT = {
  failover: 'graceful CLUSTER FAILOVER of the namespace primary',
  kill: 'namespace primary killed, replica promoted',
  lag: 'replica that missed writes promoted (replication held, then the primary killed)',
  split: 'namespace primary cut from the cluster bus, still reachable by its clients',
  migrate: 'namespace slot moved to another primary under load (MIGRATE in small batches, --cluster-replace)',
  pause:
    'namespace primary paused (SIGSTOP) past its replica promotion, then run again before it learns it was demoted',
};
