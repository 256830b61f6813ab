// Reads every ID file of a chaos run and checks them together: duplicates across all processes, and order within
// each process (per worker ID, strictly increasing); judges each process's times without IDs against the promise of
// the fault class that caused them. Then prints the summary.
import { readFileSync } from 'node:fs';
import { SETTLE_AFTER_LOSS_MS } from '../../dist/lease/lease.contract.js';

/**
 * A restarted process's boot, generously: Node and Nest loading on a busy 2-core machine, the first round trips of
 * the claim, and a floor wait (redis.maxFloorWaitMs, 2 s).
 */
export const BOOT_ALLOWANCE_MS = 5000;

/**
 * Availability per fault class: the longest time without IDs of one process that a fault of the kind may cause, from
 * the lease's rules. T is the TTL, S the settling after any new marker (SETTLE_AFTER_LOSS_MS, 12 s), B the boot
 * allowance. A holder fences within T of its last confirmed renewal, re-claims within about T, and a claim after a
 * loss waits until S has passed since the new marker; a fault's own duration (its longest drawn value) adds to it.
 * `loss`: the kind can make a new marker, so its window reaches S + T past the fault's end (else 2 T).
 */
export const PROMISES = {
  // The run's start: the fresh namespace settles once before the first claim.
  'first-use': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B (the fresh namespace settles)' },
  none: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B (no fault running)' },
  kill: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B, the victim from its restart' },
  term: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B, the victim from its restart' },
  stop: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B, paused time not counted' },
  stall: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B, stalled time not counted' },
  partition: { loss: false, ms: ({ T, B }) => 2.5 * T + 2 * T + B, rule: 'hold (≤ 2.5 T) + 2 T + B' },
  latency: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B' },
  reset: { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B' },
  'redis-restart': { loss: true, ms: ({ T, S, B }) => 2 * T + S + 2 * T + B, rule: 'down (≤ 2 T) + S + 2 T + B' },
  'redis-snapshot': { loss: true, ms: ({ T, S, B }) => 1000 + S + 2 * T + B, rule: 'down (≤ 1 s) + S + 2 T + B' },
  flushall: { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-all': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-cursor': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-expiry': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-meta': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-records': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-some': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-claim': { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'del-released': { loss: false, ms: ({ T, B }) => 2 * T + B, rule: '2 T + B (no new marker)' },
  evict: { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  rollback: { loss: true, ms: ({ T, S, B }) => S + 2 * T + B, rule: 'S + 2 T + B' },
  'restart-config': {
    loss: false,
    ms: ({ T, B }) => 10_000 + 2 * T + B,
    rule: "other contract (≤ 10 s) + 2 T + B, the victim not counted until restarted with the run's settings",
  },
  'clock-back': { loss: false, ms: ({ T, B }) => 10_000 + 2 * T + B, rule: 'step (≤ 10 s) + 2 T + B' },
  'clock-forward': { loss: false, ms: ({ T, B }) => 8000 + 2 * T + B, rule: 'step (≤ 8 s) + 2 T + B' },
  'clock-loss': { loss: true, ms: ({ T, S, B }) => 7000 + S + 2 * T + B, rule: 'step and wait (≤ 7 s) + S + 2 T + B' },
  skew: { loss: false, ms: ({ T, B }) => 20_000 + 2 * T + 2 * B, rule: 'skewed run (≤ 20 s) + 2 T + 2 B' },
  failover: { loss: true, ms: ({ T, S, B }) => 5000 + S + 2 * T + B, rule: 'promotion (≤ 5 s) + S + 2 T + B' },
  'split-brain': { loss: true, ms: ({ T, S, B }) => 5 * T + S + 2 * T + B, rule: 'cut off (≤ 5 T) + S + 2 T + B' },
  'master-restart': {
    loss: true,
    ms: ({ T, S, B }) => 10_000 + S + 2 * T + B,
    rule: "Sentinels' INFO refresh (10 s) + S + 2 T + B",
  },
};

/** The promise of a kind, in ms, for a run with `ttlMs`. */
export function promiseOf(kind, ttlMs) {
  const promise = PROMISES[kind] ?? PROMISES.none;
  return Math.round(promise.ms({ T: ttlMs, S: SETTLE_AFTER_LOSS_MS, B: BOOT_ALLOWANCE_MS }));
}

/**
 * Judges every time without IDs (gaps of one process, run ms) against the faults: a gap belongs to the fault whose
 * window (from 0.5 s before its injection to its end plus T, or S + T after a kind that makes a new marker) holds
 * the gap's start and allows the most; a gap outside every window belongs to "none". Faults injected while the gap
 * runs extend it (a loss during settling starts settling again): the gap may last until the promise of the latest of
 * them from its injection. A settling that never ends still fails: the schedule's faults stop before the run's tail,
 * and every gap must end within the promise of the last fault it met. Returns per kind the
 * longest gap and whether any gap exceeded what it was allowed.
 *
 * @param {{ process: string, from: number, ms: number }[]} gaps
 * @param {{ id: number, kind: string, startedAt: number, endedAt: number, outcome: string }[]} faults
 */
export function judgeAvailability(gaps, faults, ttlMs) {
  const acted = [
    { id: 0, kind: 'first-use', startedAt: 0, endedAt: 0, outcome: 'injected' },
    ...faults.filter((f) => f.outcome !== 'skipped'),
  ];
  const sorted = [...acted].sort((a, b) => a.startedAt - b.startedAt);
  const windowOf = (f) => {
    const after = PROMISES[f.kind]?.loss ? SETTLE_AFTER_LOSS_MS + ttlMs : 2 * ttlMs;
    return [f.startedAt - 500, Math.max(f.endedAt ?? f.startedAt, f.startedAt) + after];
  };
  const byKind = {};
  const entry = (kind) =>
    (byKind[kind] ??= { promiseMs: promiseOf(kind, ttlMs), longestMs: 0, gaps: 0, over: [], longest: null });
  for (const f of acted) entry(f.kind);
  entry('none');
  for (const gap of gaps) {
    let cause = null;
    for (const f of acted) {
      const [from, to] = windowOf(f);
      if (gap.from < from || gap.from > to) continue;
      if (cause === null || promiseOf(f.kind, ttlMs) > promiseOf(cause.kind, ttlMs)) cause = f;
    }
    const kind = cause?.kind ?? 'none';
    let reach = gap.from + promiseOf(kind, ttlMs);
    let extendedBy = null;
    for (const f of sorted) {
      if (f.startedAt <= gap.from) continue;
      if (f.startedAt > reach) break;
      const promise = promiseOf(f.kind, ttlMs);
      if (f.startedAt + promise <= reach) continue;
      reach = f.startedAt + promise;
      extendedBy = { fault: f, count: (extendedBy?.count ?? 0) + 1 };
    }
    const allowedMs = reach - gap.from;
    const judged = {
      process: gap.process,
      fromS: Number((gap.from / 1000).toFixed(1)),
      ms: Math.round(gap.ms),
      fault: cause === null ? null : cause.id === 0 ? 'start' : `#${cause.id}`,
      extendedBy:
        extendedBy === null
          ? null
          : `${extendedBy.count > 1 ? `${extendedBy.count} faults to ` : ''}#${extendedBy.fault.id} ${extendedBy.fault.kind}`,
      allowedMs: Math.round(allowedMs),
    };
    const row = entry(kind);
    row.gaps += 1;
    if (judged.ms > row.longestMs) {
      row.longestMs = judged.ms;
      row.longest = judged;
    }
    if (judged.ms > allowedMs) row.over.push(judged);
  }
  for (const row of Object.values(byKind)) row.ok = row.over.length === 0;
  return { ok: Object.values(byKind).every((row) => row.ok), byKind };
}

/** The fields of an ID of `layout` (all fields given explicitly, time unit 1 ms). */
export function decoder(layout) {
  const seq = BigInt(layout.sequenceBits);
  const worker = BigInt(layout.workerBits);
  const dc = BigInt(layout.datacenterBits);
  const epoch = layout.epoch ?? Date.UTC(2026, 0, 1);
  return (id) => ({
    timestampMs: Number(id >> (seq + worker + dc)) + epoch,
    workerId: Number((id >> seq) & ((1n << worker) - 1n)),
    sequence: Number(id & ((1n << seq) - 1n)),
  });
}

/** Complete lines only: a line without its newline was being written when the process died, and is not an ID. */
function readIds(file) {
  let text;
  try {
    text = readFileSync(file, 'latin1');
  } catch {
    return { ids: new BigUint64Array(0), partial: false };
  }
  const complete = text.lastIndexOf('\n') + 1;
  const lines = complete === 0 ? [] : text.slice(0, complete - 1).split('\n');
  const ids = new BigUint64Array(lines.length);
  for (let i = 0; i < lines.length; i++) ids[i] = BigInt(lines[i]);
  return { ids, partial: complete < text.length };
}

/**
 * @param {{ label: string, file: string }[]} files one per process (a slot's generation), in any order
 * @param {object} layout
 */
export function analyseIds(files, layout) {
  const decode = decoder(layout);
  const workerShift = BigInt(layout.sequenceBits);
  const workerMask = (1n << BigInt(layout.workerBits)) - 1n;
  const perFile = [];
  let total = 0;
  let partialLines = 0;
  const order = { count: 0, examples: [] };
  for (const { label, file } of files) {
    const { ids, partial } = readIds(file);
    if (partial) partialLines += 1;
    // IDs of one process under one worker ID must strictly increase, in the order the process issued them.
    const last = new Map();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const worker = (id >> workerShift) & workerMask;
      const previous = last.get(worker);
      if (previous !== undefined && id <= previous) {
        order.count += 1;
        if (order.examples.length < 10) {
          order.examples.push({
            process: label,
            line: i + 1,
            previous: String(previous),
            id: String(id),
            workerId: Number(worker),
          });
        }
      }
      last.set(worker, id);
    }
    perFile.push({ label, ids });
    total += ids.length;
  }

  const all = new BigUint64Array(total);
  let offset = 0;
  for (const { ids } of perFile) {
    all.set(ids, offset);
    offset += ids.length;
  }
  all.sort();
  let extraCopies = 0;
  let duplicatedValues = 0;
  const sample = [];
  for (let i = 1; i < all.length; i++) {
    if (all[i] !== all[i - 1]) continue;
    extraCopies += 1;
    if (i === 1 || all[i - 1] !== all[i - 2]) {
      duplicatedValues += 1;
      if (sample.length < 10) sample.push(all[i]);
    }
  }
  const examples = sample.map((id) => {
    const issuedBy = [];
    for (const { label, ids } of perFile) {
      let n = 0;
      for (let i = 0; i < ids.length; i++) if (ids[i] === id) n += 1;
      if (n > 0) issuedBy.push(n === 1 ? label : `${label} ×${n}`);
    }
    const parts = decode(id);
    return { id: String(id), ...parts, time: new Date(parts.timestampMs).toISOString(), issuedBy };
  });
  // Which processes issued duplicates, pairwise, over all of them: where to look first.
  let byProcess = {};
  if (extraCopies > 0) byProcess = duplicatesByProcess(perFile, all);
  return {
    issued: total,
    distinct: total - extraCopies,
    duplicates: { count: extraCopies, values: duplicatedValues, examples, byProcess },
    orderViolations: order,
    partialLines,
    perProcess: perFile.map(({ label, ids }) => ({ process: label, issued: ids.length })),
  };
}

/** How many duplicated IDs each set of processes shares. */
function duplicatesByProcess(perFile, sorted) {
  const duplicated = new Set();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) duplicated.add(sorted[i]);
  const holders = new Map();
  for (const { label, ids } of perFile) {
    for (let i = 0; i < ids.length; i++) {
      if (!duplicated.has(ids[i])) continue;
      const list = holders.get(ids[i]) ?? [];
      list.push(label);
      holders.set(ids[i], list);
    }
  }
  const counts = {};
  for (const labels of holders.values()) {
    const key = [...new Set(labels)].sort().join(' + ');
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

const fmt = (n) => n.toLocaleString('en-US');
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** The human summary. */
export function printSummary(summary, write = (line) => process.stdout.write(`${line}\n`)) {
  const { ids } = summary;
  write('');
  write(
    `=== chaos run: seed ${summary.seed}, ${summary.durationS} s, ${summary.processes} processes, ${summary.mode} ===`,
  );
  write(`replay: ${summary.replay}`);
  write(`IDs issued: ${fmt(ids.issued)} (${fmt(ids.distinct)} distinct) by ${ids.perProcess.length} process runs`);
  if (ids.partialLines > 0) write(`  (${ids.partialLines} file(s) ended in a partly written line, ignored)`);
  write(
    `duplicates: ${fmt(ids.duplicates.count)}${ids.duplicates.count > 0 ? ` (${fmt(ids.duplicates.values)} IDs issued more than once)` : ''}`,
  );
  for (const example of ids.duplicates.examples) {
    write(
      `  ${example.id}  worker ${example.workerId} seq ${example.sequence} at ${example.time}: ${example.issuedBy.join(', ')}`,
    );
  }
  for (const [processes, count] of Object.entries(ids.duplicates.byProcess)) {
    write(`  ${fmt(count)} shared by ${processes}`);
  }
  write(`order violations (per process and worker ID): ${fmt(ids.orderViolations.count)}`);
  for (const example of ids.orderViolations.examples) {
    write(
      `  ${example.process} line ${example.line}, worker ${example.workerId}: ${example.id} after ${example.previous}`,
    );
  }
  const refusals = Object.entries(summary.refusals).sort((a, b) => b[1] - a[1]);
  write(`refusals: ${refusals.length === 0 ? 'none' : refusals.map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}`);
  const boots = Object.entries(summary.bootFailures);
  if (boots.length > 0) write(`failed boots (restarted): ${boots.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (summary.crashes > 0) write(`unexpected exits: ${summary.crashes}`);
  write(
    `longest time without IDs: overall ${secs(summary.gaps.overall.ms)}` +
      (summary.gaps.overall.fromS === null ? '' : ` (from +${summary.gaps.overall.fromS} s)`),
  );
  for (const [name, gap] of Object.entries(summary.gaps.perProcess)) {
    write(
      `  ${name}: ${secs(gap.ms)}${gap.fromS === null ? '' : ` from +${gap.fromS} s`}` +
        ` (${fmt(gap.issued)} IDs, ${gap.starts} start(s))`,
    );
  }
  write(
    '  (while running and not stopped or stalled by the run; boots count, a failed one until the next boot issues)',
  );
  const { faults } = summary;
  write(`faults: ${faults.injected} injected, ${faults.skipped} skipped, ${faults.failed} failed`);
  for (const [kind, counts] of Object.entries(faults.byKind).sort((a, b) => b[1].injected - a[1].injected)) {
    const extra = [
      counts.skipped > 0 ? `${counts.skipped} skipped` : '',
      counts.failed > 0 ? `${counts.failed} failed` : '',
    ].filter(Boolean);
    write(`  ${kind.padEnd(15)} ${counts.injected}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`);
  }
  const { availability } = summary;
  write("availability per fault class (longest time without IDs of one process, from within the fault's window):");
  write(`  ${'kind'.padEnd(15)} ${'gaps'.padStart(5)} ${'longest'.padStart(8)} ${'promise'.padStart(8)}  verdict`);
  const rows = Object.entries(availability.byKind).sort((a, b) => b[1].longestMs - a[1].longestMs);
  for (const [kind, row] of rows) {
    const where =
      row.longest === null
        ? ''
        : ` (${row.longest.process} from +${row.longest.fromS} s` +
          `${row.longest.fault === null ? '' : `, ${row.longest.fault}`}` +
          `${row.longest.extendedBy === null ? '' : `, extended by ${row.longest.extendedBy}`})`;
    write(
      `  ${kind.padEnd(15)} ${String(row.gaps).padStart(5)} ${secs(row.longestMs).padStart(8)} ` +
        `${secs(row.promiseMs).padStart(8)}  ${row.ok ? 'ok' : `OVER (${row.over.length})`}${where}`,
    );
    for (const over of row.over.slice(0, 5)) {
      write(
        `      ${over.process} from +${over.fromS} s: ${secs(over.ms)} > ${secs(over.allowedMs)}` +
          `${over.fault === null ? '' : ` (${over.fault}${over.extendedBy === null ? '' : `, ${over.extendedBy}`})`}`,
      );
    }
  }
  for (const line of summary.notes) write(`note: ${line}`);
  const failures = [
    ids.duplicates.count > 0 ? `${fmt(ids.duplicates.count)} duplicates` : '',
    ids.orderViolations.count > 0 ? `${fmt(ids.orderViolations.count)} order violations` : '',
    ...rows.filter(([, row]) => !row.ok).map(([kind]) => `${kind} over its availability promise`),
  ].filter(Boolean);
  write(
    summary.ok
      ? 'result: OK (no duplicate, no order violation, every fault class within its availability promise)'
      : `result: FAILED (${failures.join(', ')})`,
  );
}
