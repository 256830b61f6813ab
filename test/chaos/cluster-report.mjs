// The verdict of the chaos run's Cluster profile, and its printout.
import { promotionWindowMs } from '../../dist/lease/redis/cluster.timing.js';
import { SETTLE_AFTER_LOSS_MS } from '../../dist/lease/lease.contract.js';
import { BOOT_ALLOWANCE_MS } from './report.mjs';

/**
 * How long the namespace's slot may go without a primary (a promotion, the split of a slot move) and cost no holder
 * its ID, with the default renew interval (T / 4) and fence margin (T / 5): a holder's last confirmed renewal came
 * at most one renew interval before the outage began, and its lease is taken back into the new primary's data only
 * while that lease's expiry lies more than the fence margin ahead of the new server's time (invariant 9).
 */
export function proofWindowMs(ttlMs) {
  return promotionWindowMs({ ttlMs, renewIntervalMs: Math.floor(ttlMs / 4), fenceMarginMs: Math.floor(ttlMs / 5) });
}

/**
 * The promise per fault, from its measured outage: a holder goes without IDs for at most 3 T when the outage ended
 * within the proof window (it takes its ID back at its first renewal on the new primary). When the outage outlasts
 * the window, the holders' leases cannot be proven live on the new primary: they fence, wait out the settling of
 * the new marker and claim again, so the promise is the outage, S + 2 T and a re-claim's allowance (the same bound as
 * any loss in report.mjs). The kinds differ only in what the outage is: the switch of a graceful failover, the time
 * to promote after a kill or a cut (cluster-node-timeout plus the election), the split of a slot move.
 */
export function clusterPromise(fault, ttlMs) {
  const outageMs = fault.result?.outageMs;
  const window = proofWindowMs(ttlMs);
  if (outageMs !== undefined && outageMs <= window) {
    return { ms: 3 * ttlMs, rule: `outage ${outageMs} ms within the proof window ${window} ms: 3 T` };
  }
  return {
    ms: (outageMs ?? 5000) + SETTLE_AFTER_LOSS_MS + 2 * ttlMs + BOOT_ALLOWANCE_MS,
    rule:
      `outage ${outageMs ?? '?'} ms beyond the proof window ${window} ms: the holders fence, wait out the settling ` +
      'and claim again (outage + S + 2 T + B)',
  };
}

/**
 * @param {{ ids: object, exits: object[], keyErrors: object[], gaps: { process: string, from: number, ms: number }[],
 *   faults: object[], ttlMs: number }} input
 */
export function judgeCluster({ ids, exits, keyErrors, recoveryLogs = [], gaps, faults, ttlMs }) {
  const perFault = faults.map((fault, index) => {
    // A holder says what it took back at its first renewal after the fault, which may come after the fault healed:
    // its logs until the next fault are this fault's.
    const until = faults[index + 1]?.startedAt ?? Infinity;
    const logs = recoveryLogs.filter((l) => l.at >= fault.startedAt && l.at < until);
    const promise = clusterPromise(fault, ttlMs);
    const mine = gaps.filter((gap) => gap.from >= fault.startedAt - 500 && gap.from <= (fault.healedAt ?? Infinity));
    const longest = mine.reduce((max, gap) => Math.max(max, gap.ms), 0);
    return {
      id: fault.id,
      kind: fault.kind,
      outcome: fault.outcome,
      outageMs: fault.result?.outageMs ?? null,
      missedBytes: fault.result?.missedBytes ?? null,
      holdersWithoutIds: new Set(mine.map((g) => g.process)).size,
      longestGapMs: longest,
      promiseMs: promise.ms,
      rule: promise.rule,
      mayHaveLost: logs.filter((l) => l.kind === 'may-have-lost').length,
      nothingLost: logs.filter((l) => l.kind === 'nothing-lost').length,
      ok: fault.outcome === 'injected' && longest <= promise.ms,
      gaps: mine,
    };
  });
  const attributed = new Set(perFault.flatMap((f) => f.gaps));
  // Outside every fault: no holder goes without IDs longer than 3 T.
  const unexplained = gaps.filter((gap) => !attributed.has(gap) && gap.ms > 3 * ttlMs);
  const earlyWrites = faults.flatMap((f) => (f.result?.earlyWrites ?? []).map((key) => ({ fault: f.id, key })));
  const busyKeys = faults.reduce((sum, f) => sum + (f.result?.busyKeys ?? 0), 0);
  const silentExits = exits.filter((exit) => exit.error === null);
  const checks = {
    duplicates: ids.duplicates.count === 0,
    order: ids.orderViolations.count === 0,
    // No holder exits; an instance waiting for a free ID may end its boot with a typed error (and is started again).
    noExit: exits.every((exit) => !exit.held && exit.error !== null),
    noSilentExit: silentExits.length === 0,
    noUndeclaredKey: keyErrors.length === 0,
    noEarlyWrite: earlyWrites.length === 0 && busyKeys === 0,
    faultsWithinPromise: perFault.every((f) => f.ok),
    // Honest logs: a graceful failover and a slot move lose nothing, and no holder warns that data may be lost.
    noLossWarningWithoutLoss: perFault.every((f) => !['failover', 'migrate'].includes(f.kind) || f.mayHaveLost === 0),
    noUnexplainedGap: unexplained.length === 0,
  };
  return {
    ok: Object.values(checks).every(Boolean),
    checks,
    perFault,
    exits,
    silentExits,
    keyErrors,
    earlyWrites,
    busyKeys,
    unexplained,
  };
}

const fmt = (n) => n.toLocaleString('en-US');

export function printClusterSummary(summary, write) {
  write('');
  write(`Cluster chaos run: ${summary.ok ? 'PASSED' : 'FAILED'} (${summary.replay})`);
  write(
    `  IDs: ${fmt(summary.ids.issued)} issued, ${fmt(summary.ids.duplicates.count)} duplicates, ` +
      `${fmt(summary.ids.orderViolations.count)} out of order; ${summary.durationS} s`,
  );
  for (const [check, ok] of Object.entries(summary.checks)) write(`  ${ok ? 'ok  ' : 'FAIL'} ${check}`);
  write('  per fault (outage = the slot without a primary that runs the scripts):');
  for (const f of summary.perFault) {
    write(
      `    #${f.id} ${f.kind.padEnd(8)} ${f.outcome.padEnd(8)} outage ${String(f.outageMs ?? '-').padStart(5)} ms` +
        `${f.missedBytes === null ? '' : `, replica missed ${f.missedBytes} B`}; ` +
        `${f.holdersWithoutIds} holder(s) without IDs ≥ 0.5 s, longest ${f.longestGapMs} ms, ` +
        `logs: ${f.nothingLost} "nothing lost", ${f.mayHaveLost} "may have lost" ` +
        `(promise ${f.promiseMs} ms: ${f.rule})${f.ok ? '' : '  <-- over'}`,
    );
  }
  for (const exit of summary.exits) {
    write(`  exit: ${exit.process} at ${exit.at} ms, code ${exit.code}, ${exit.error ?? 'WITHOUT an error event'}`);
  }
  for (const error of summary.keyErrors) write(`  undeclared key: ${error.process}: ${error.message}`);
  for (const early of summary.earlyWrites) write(`  written early on the importing node: #${early.fault} ${early.key}`);
  for (const gap of summary.unexplained) write(`  gap outside any fault: ${gap.process} ${gap.ms} ms from ${gap.from}`);
  if (Object.keys(summary.refusals).length > 0) write(`  refusals: ${JSON.stringify(summary.refusals)}`);
  for (const note of summary.notes) write(`  note: ${note}`);
}
