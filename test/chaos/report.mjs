// Reads every ID file of a chaos run and checks them together: duplicates across all processes, and order within
// each process (per worker ID, strictly increasing). Then prints the summary.
import { readFileSync } from 'node:fs';

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
  write("  (while running and not stopped or stalled by the run; a restart's boot counts, the first boot not; ±0.1 s)");
  const { faults } = summary;
  write(`faults: ${faults.injected} injected, ${faults.skipped} skipped, ${faults.failed} failed`);
  for (const [kind, counts] of Object.entries(faults.byKind).sort((a, b) => b[1].injected - a[1].injected)) {
    const extra = [
      counts.skipped > 0 ? `${counts.skipped} skipped` : '',
      counts.failed > 0 ? `${counts.failed} failed` : '',
    ].filter(Boolean);
    write(`  ${kind.padEnd(15)} ${counts.injected}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`);
  }
  for (const line of summary.notes) write(`note: ${line}`);
  write(
    summary.ok
      ? 'result: OK (no duplicate, no order violation)'
      : `result: FAILED (${fmt(ids.duplicates.count)} duplicates, ${fmt(ids.orderViolations.count)} order violations)`,
  );
}
