/**
 * The simulator's Redis topology faults, scripted: promotion of a lagging replica (with holders told the old primary
 * for a while), eviction in LRU order, and a Redis Cluster slot migration. Each shows the fault reaches the lease
 * (the timeline shows the lease reacting) and, where the lease promises safety, that it holds; the split brain that
 * outlasts the settling shows what the Sentinel confirmation exists for, and the same split behind Sentinels that the
 * confirmation closes it.
 */
import { describe, expect, it } from '@jest/globals';
import { runSchedule, type Fault, type RunResult, type Schedule } from './world.js';

const four = [{ skewMs: 0 }, { skewMs: 40 }, { skewMs: -40 }, { skewMs: 10 }];

function schedule(faults: Fault[]): Schedule {
  return { seed: 9, holders: four, faults, faultWindowMs: 30_000 };
}

function explain(result: RunResult): string {
  return `${JSON.stringify(result.violation)}\n${result.timeline.slice(-60).join('\n')}`;
}

function after(result: RunResult, ms: number): string[] {
  return result.timeline.filter((line) => Number(line.trim().split(' ')[0]) >= ms);
}

describe('Redis topology faults', () => {
  it('a replica promoted 2.5 s behind loses the last writes; every holder sees the loss and none issues twice', async () => {
    const result = await runSchedule(
      schedule([
        { at: 14_000, kind: 'failover', lagMs: 2_500, stale: [2], staleMs: 3_000 },
        { at: 14_100, kind: 'kill', holder: 1, downMs: 100 },
      ]),
      { trace: true },
    );
    if (result.violation !== undefined) throw new Error(explain(result));
    const lines = after(result, 14_000);
    // Holder 2 went on renewing on the old primary, then met the promoted one's new marker.
    expect(lines.some((line) => /h2#1 renew ran \(on the old primary\): \["ok"/.test(line))).toBe(true);
    expect(lines.some((line) => /h2#1 renew ran: \["(recovered|lost)"/.test(line))).toBe(true);
  });

  it('a split brain that outlasts the settling, without the Sentinel confirmation, lets two holders share an ID', async () => {
    // DESIGN 10 and the README: the lease confirms the master with the Sentinels for exactly this case. The simulator
    // leaves the confirmation out (its holders have no Sentinels, and the replicas are no Cluster), so a stale view longer than the settling is the
    // hole it closes; the search gives stale views only to schedules behind Sentinels for that reason.
    const result = await runSchedule(
      {
        ...schedule([
          { at: 12_000, kind: 'failover', lagMs: 2_500, stale: [0], staleMs: 18_000 },
          { at: 12_100, kind: 'kill', holder: 1, downMs: 100 },
        ]),
        plainReplicas: true,
      },
      { trace: true },
    );
    expect(result.violation?.kind).toMatch(/order|duplicate/);
  });

  // Found by the search (seed 56981, shrunk): a short stale view is no safer without Sentinels. The first failover
  // starts a settling on the promoted node; the second makes that node the old primary of a stale holder, whose claim
  // there succeeds when the settling ends, on an ID whose lease lapsed there because its holder moved on to the third
  // node and took it back. Hence the search gives stale views only to schedules behind Sentinels.
  const twoFailovers: Schedule = {
    seed: 1,
    holders: [{ skewMs: 0 }, { skewMs: 0 }, { skewMs: 0 }],
    faultWindowMs: 30_000,
    faults: [
      { at: 8_761, kind: 'failover', lagMs: 0, stale: [2], staleMs: 3_231, sentinelDelays: [0, 0, 0] },
      { at: 15_801, kind: 'failover', lagMs: 0, stale: [0], staleMs: 5_248, sentinelDelays: [0, 0, 0] },
    ],
  };

  it('without Sentinels, even a stale view of 5 s lets two holders share an ID when the old primary stops settling', async () => {
    const result = await runSchedule({ ...twoFailovers, sentinels: false, plainReplicas: true }, { trace: true });
    expect(result.violation?.kind).toBe('duplicate');
    // The stale holder's claim on the old primary took the ID that the other holder keeps on the promoted one.
    expect(after(result, 15_801).some((line) => /h0#1 claim ran \(on the old primary\): \["ok"/.test(line))).toBe(true);
  });

  it('the same two failovers on a Redis Cluster: the primaries do not confirm the stale holder’s claim', async () => {
    const result = await runSchedule({ ...twoFailovers, sentinels: false }, { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
    // Old primaries handed out IDs to stale holders' claims; none was issued under (no violation).
    const lines = after(result, 8_761);
    expect(lines.some((line) => /h\d#1 claim ran \(on the old primary\): \["ok"/.test(line))).toBe(true);
    expect(after(result, 15_801).some((line) => /h0#1 issues as worker/.test(line))).toBe(true);
  });

  it('the same two failovers behind Sentinels: the stale holder gets no confirmation, and all issue again', async () => {
    const result = await runSchedule({ ...twoFailovers, sentinels: true }, { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
    expect(after(result, 15_801).some((line) => /h0#1 issues as worker/.test(line))).toBe(true);
  });

  // Found by a long search (seed 594278, shrunk): two failovers 760 ms apart, one Sentinel hearing of the first only
  // after the second. The model had that Sentinel authorise the second failover while it still named the master
  // before the first; hearing of the first then made it name the second's old master as up, and with the Sentinel
  // that was not asked, a majority confirmed the stale holder's claim there. A Sentinel that sees a master down knows
  // that master.
  it('a Sentinel that authorises a failover knows the master it replaces, also right after another failover', async () => {
    const quick: Schedule = {
      seed: 1,
      holders: [{ skewMs: 0 }, { skewMs: 0 }],
      faultWindowMs: 30_000,
      sentinels: true,
      faults: [
        { at: 6021, kind: 'failover', lagMs: 0, stale: [], staleMs: 0, sentinelDelays: [1281, 0, 0] },
        { at: 6781, kind: 'failover', lagMs: 0, stale: [0], staleMs: 12_005, sentinelDelays: [12_011, 0, 12_011] },
        { at: 7001, kind: 'partition', holder: 0, ms: 4826, way: 'both' },
      ],
    };
    const result = await runSchedule(quick, { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
    // The stale holder's claims on the old primary were answered there, and never confirmed into an ID.
    const lines = after(result, 6781);
    expect(lines.some((line) => /h0#1 claim ran \(on the old primary\)/.test(line))).toBe(true);
    expect(lines.some((line) => /h0#1 issues as worker/.test(line) && Number(line.trim().split(' ')[0]) < 18_805)).toBe(
      false,
    );
  });

  it('the same split brain behind Sentinels: the stale holder fences once a majority names the promoted master', async () => {
    const split: Schedule = {
      ...schedule([
        { at: 12_000, kind: 'failover', lagMs: 2_500, stale: [0], staleMs: 18_000, sentinelDelays: [0, 2_000, 9_000] },
        { at: 12_100, kind: 'kill', holder: 1, downMs: 100 },
      ]),
      sentinels: true,
    };
    const result = await runSchedule(split, { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
    // The confirmation told it the Sentinels name another master: it reconnected and met the promoted one's marker.
    expect(after(result, 12_000).some((line) => /h0#\d reconnects to the master the Sentinels name/.test(line))).toBe(
      true,
    );
  });

  it('two failovers at once, Sentinels hearing of the first last: they end up naming the second, and all issue again', async () => {
    // A Sentinel's late news of an older failover (a lower configuration epoch) must not replace a newer view.
    const twice: Schedule = {
      seed: 1,
      holders: [{ skewMs: 0 }, { skewMs: 0 }],
      faultWindowMs: 30_000,
      sentinels: true,
      faults: [
        { at: 14_861, kind: 'failover', lagMs: 0, stale: [], staleMs: 0, sentinelDelays: [15_121, 15_121, 0] },
        { at: 14_862, kind: 'failover', lagMs: 0, stale: [], staleMs: 0, sentinelDelays: [0, 0, 0] },
        { at: 19_501, kind: 'migrate', ms: 2_801, batch: 7 },
      ],
    };
    const result = await runSchedule(twice, { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
  });

  it('behind Sentinels slow to name the new master, the majority that authorised the failover sees the old one down', async () => {
    // Found when the simulated Sentinels kept naming the old master as up for 9 s after the promotion: a holder
    // suspended, then told the old primary, had its renewals there confirmed while the promoted side handed its ID
    // out. Real Sentinels cannot do that: a failover needs a majority to see the master down and authorise it.
    const slow: Schedule = {
      seed: 5,
      holders: [{ skewMs: 0 }, { skewMs: 0 }, { skewMs: 0 }],
      faultWindowMs: 30_000,
      sentinels: true,
      faults: [
        { at: 12_001, kind: 'delete', keys: [0] },
        { at: 12_058, kind: 'suspend', holder: 0, ms: 8_651 },
        { at: 14_281, kind: 'partition', holder: 1, ms: 5_067, way: 'both' },
        {
          at: 15_121,
          kind: 'failover',
          lagMs: 0,
          stale: [0],
          staleMs: 8_897,
          sentinelDelays: [7_552, 8_911, 8_901],
        },
      ],
    };
    const result = await runSchedule(slow, { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
  });

  it('eviction of every key in LRU order is a loss like FLUSHALL: settling, then every holder issues again', async () => {
    const result = await runSchedule(schedule([{ at: 15_000, kind: 'evict', count: 7 }]), { trace: true });
    if (result.violation !== undefined) throw new Error(explain(result));
    expect(after(result, 15_000).some((line) => /^\s*\d+ ms {2}evicted .*meta/.test(line))).toBe(true);
    expect(result.worstRecoveryMs).toBeLessThan(20_000);
  });

  it('eviction of the least used keys only (records of idle IDs) loses no live lease', async () => {
    const result = await runSchedule(
      schedule([
        { at: 14_000, kind: 'shutdown', holder: 3, downMs: 10_000 },
        { at: 16_000, kind: 'evict', count: 1 },
      ]),
      { trace: true },
    );
    if (result.violation !== undefined) throw new Error(explain(result));
    expect(after(result, 16_000).some((line) => /evicted \S+/.test(line))).toBe(true);
  });

  it('a slot moved in one batch: ASK sends the scripts to the importing node, which runs them; MOVED once the slot is its', async () => {
    const result = await runSchedule(schedule([{ at: 15_000, kind: 'migrate', ms: 3_000, batch: 7 }]), {
      trace: true,
    });
    if (result.violation !== undefined) throw new Error(explain(result));
    const lines = after(result, 15_000);
    expect(lines.some((line) => /answered ASK/.test(line))).toBe(true);
    expect(lines.some((line) => /renew ran \(on the importing node\)/.test(line))).toBe(true);
    expect(lines.some((line) => /answered TRYAGAIN|Too many Cluster redirections/.test(line))).toBe(false);
    expect(lines.some((line) => /slot migrated/.test(line))).toBe(true);
    expect(after(result, 18_000).some((line) => /answered MOVED/.test(line))).toBe(true);
    // Another run_id is a new marker: the holders take their IDs back with proof and keep issuing.
    expect(lines.some((line) => /renew ran \(on the importing node\): \["recovered"/.test(line))).toBe(true);
    expect(lines.some((line) => /refused: lost/.test(line))).toBe(false);
  });

  it('keys moved one by one: TRYAGAIN while they are split, and ioredis gives up after 16 redirections', async () => {
    // The observation on a real cluster: a split of 2.6 s or more cost every holder its ID. The lease stays
    // safe (no violation) and every holder issues again after the settling.
    const result = await runSchedule(schedule([{ at: 15_000, kind: 'migrate', ms: 3_000, batch: 1 }]), {
      trace: true,
    });
    if (result.violation !== undefined) throw new Error(explain(result));
    const lines = after(result, 15_000);
    expect(lines.some((line) => /answered ASK/.test(line))).toBe(true);
    expect(lines.some((line) => /answered TRYAGAIN/.test(line))).toBe(true);
    expect(lines.some((line) => /Too many Cluster redirections\. Last error: TRYAGAIN/.test(line))).toBe(true);
    expect(lines.some((line) => /slot migrated/.test(line))).toBe(true);
    expect(result.worstRecoveryMs).toBeGreaterThan(0);
  });
});
