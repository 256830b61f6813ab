// The chaos run's Cluster profile: a real Redis Cluster of three primaries and three replicas (cluster-topology.mjs),
// N processes issuing IDs through the module (dist/) with an ioredis Cluster client each, and the Cluster's fault
// kinds (cluster-faults.mjs) against the primary serving the namespace's slot, one after another in a seeded order,
// each given time to heal before the next:
//
//   npm run chaos -- --profile cluster [--rounds 3] [--processes 4] [--ttl 6000] [--node-timeout 1000] [--seed N]
//                                      [--faults failover,kill,lag,split,migrate,pause] [--batch 2] [--json f] [--keep]
//   npm run chaos -- --profile cluster --short      one round of the six kinds, about a minute and a half
//
// The report (cluster-report.mjs) checks: no duplicate and per-process order (every ID recorded), no process that
// exited (none is stopped by the run, so any exit is a finding, and one without an error event is a silent exit),
// no script error about an undeclared or non-local key, no key written on an importing node before it moved, and
// each holder's longest time without IDs against the promise of its fault class.
//
// Exit code 1 when a check failed, 2 when the run could not be carried out.
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ChildSlot } from './children.mjs';
import { CLUSTER_FAULTS, CLUSTER_FAULT_TEXT } from './cluster-faults.mjs';
import { judgeCluster, printClusterSummary } from './cluster-report.mjs';
import { ClusterTopology } from './cluster-topology.mjs';
import { analyseIds } from './report.mjs';
import { mulberry32 } from './schedule.mjs';
import { SETTLE_AFTER_LOSS_MS } from '../../dist/lease/lease.contract.js';

const USAGE = `Usage: npm run chaos -- --profile cluster [options]
  --short              one round of every kind (about a minute): the form the test suite runs
  --rounds <n>         rounds of the fault kinds, each in a seeded order (default 3)
  --processes <n>      child processes (default 4)
  --worker-bits <n>    the layout's worker bits (default 3: 8 IDs); fewer IDs than processes leaves some waiting
  --ttl <ms>           the lease TTL (default 6000)
  --node-timeout <ms>  cluster-node-timeout (default 1000)
  --faults <list>      comma-separated kinds (default all): ${Object.keys(CLUSTER_FAULTS).join(', ')}
  --batch <n>          keys per MIGRATE while the slot moves (default 2)
  --seed <n>           replays an order of faults (default random, printed)
  --json <file>        also write the summary as JSON
  --keep               keep the run's directory even when it passes`;

/** 3 worker bits by default: 8 IDs, so that every process holds one and holders re-claim while old leases lapse. */
const layoutOf = (workerBits) => ({
  timestampBits: 41,
  datacenterBits: 0,
  workerBits,
  sequenceBits: 12,
  timeUnitMs: 1,
});
const NAMESPACE = 'chaos';
const KEY_PREFIX = `snowflake:{${NAMESPACE}:dc0}:`;
const CLOCK_BACK_TOLERANCE_MS = 100;

export function parseClusterOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      profile: { type: 'string' },
      short: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '3' },
      processes: { type: 'string', default: '4' },
      'worker-bits': { type: 'string', default: '3' },
      ttl: { type: 'string', default: '6000' },
      'node-timeout': { type: 'string', default: '1000' },
      faults: { type: 'string' },
      batch: { type: 'string', default: '2' },
      seed: { type: 'string' },
      json: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const number = (name, min, max) => {
    const value = Number(values[name]);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new Error(`--${name} must be an integer from ${min} to ${max}, got ${values[name]}`);
    }
    return value;
  };
  const kinds = values.faults === undefined ? Object.keys(CLUSTER_FAULTS) : values.faults.split(',');
  for (const kind of kinds) {
    if (!(kind in CLUSTER_FAULTS)) throw new Error(`unknown Cluster fault kind ${kind}`);
  }
  return {
    rounds: values.short ? 1 : number('rounds', 1, 1000),
    short: values.short,
    processes: number('processes', 1, 16),
    workerBits: number('worker-bits', 1, 4),
    ttlMs: number('ttl', 1000, 10_000),
    nodeTimeoutMs: number('node-timeout', 100, 60_000),
    kinds,
    batch: number('batch', 1, 1000),
    seed: values.seed === undefined ? randomInt(1, 2 ** 31) : number('seed', 0, 2 ** 32 - 1),
    json: values.json,
    keep: values.keep,
  };
}

class ClusterChaosRun {
  constructor(options) {
    this.options = options;
    this.dir = mkdtempSync(join(tmpdir(), 'snowflake-chaos-cluster-'));
    this.t0 = performance.now();
    this.ending = false;
    this.slots = [];
    this.faultLog = [];
    this.notes = [];
    this.random = mulberry32(options.seed);
    this.layout = layoutOf(options.workerBits);
    /** Per slot: when each generation reported ready (run ms), and every lastError it reported. */
    this.readyAt = new Map();
    this.errors = new Map();
  }

  now() {
    return performance.now() - this.t0;
  }

  stamp(at = this.now()) {
    return `+${(at / 1000).toFixed(3).padStart(8)}s`;
  }

  log(line) {
    process.stdout.write(`${line}\n`);
  }

  sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  }

  replay() {
    const { options } = this;
    return [
      'npm run chaos -- --profile cluster',
      options.short ? '--short' : `--rounds ${options.rounds}`,
      `--seed ${options.seed}`,
      `--processes ${options.processes}`,
      `--ttl ${options.ttlMs}`,
      `--node-timeout ${options.nodeTimeoutMs}`,
      options.kinds.length === Object.keys(CLUSTER_FAULTS).length ? '' : `--faults ${options.kinds.join(',')}`,
      options.batch === 2 ? '' : `--batch ${options.batch}`,
      options.workerBits === 3 ? '' : `--worker-bits ${options.workerBits}`,
    ]
      .filter(Boolean)
      .join(' ');
  }

  async setUp() {
    const { options } = this;
    this.log(`chaos run, Cluster profile: seed ${options.seed} (replay: ${this.replay()})`);
    this.log(`  directory ${this.dir}`);
    this.topology = new ClusterTopology(this.dir, {
      nodeTimeoutMs: options.nodeTimeoutMs,
      log: (line) => this.log(line),
    });
    await this.topology.start();
    this.slot = await this.topology.slotOf(`${KEY_PREFIX}meta`);
    this.log(`  ${this.topology.describe()}; the namespace's slot is ${this.slot}`);
    this.log(
      `  ${options.processes} processes, lease TTL ${options.ttlMs} ms, layout ${this.layout.workerBits} worker bits`,
    );
    this.t0 = performance.now();
    for (let index = 0; index < options.processes; index++) {
      const slot = new ChildSlot({
        index,
        dir: this.dir,
        now: () => this.now(),
        faketime: false,
        log: (line) => this.log(`${this.stamp()}  ${line}`),
        config: () => ({
          ...this.topology.connection(),
          namespace: NAMESPACE,
          ttlMs: options.ttlMs,
          layout: this.layout,
          clockBackToleranceMs: CLOCK_BACK_TOLERANCE_MS,
          redis: { retryBackoffMs: 100, connectTimeoutMs: 1000 },
          intervalMs: 1,
          statsEveryMs: 100,
        }),
      });
      const handle = slot.handle.bind(slot);
      slot.handle = (child, event) => {
        if (child === slot.child && event.event === 'ready') {
          this.readyAt.set(slot.name, [...(this.readyAt.get(slot.name) ?? []), this.now()]);
        }
        if (child === slot.child && event.event === 'stats' && event.lastError) {
          const seen = this.errors.get(slot.name) ?? new Set();
          seen.add(event.lastError);
          this.errors.set(slot.name, seen);
        }
        handle(child, event);
      };
      this.slots.push(slot);
      slot.start();
    }
    // The fresh namespace settles once before the first claim.
    await this.waitAllIssuing('every process to hold an ID', SETTLE_AFTER_LOSS_MS + 30_000);
    this.log(`${this.stamp()}  every process issues IDs`);
  }

  /**
   * Waits until every process has issued IDs after `since` (run ms); with fewer IDs than processes, until as many
   * processes as there are IDs have.
   */
  async waitAllIssuing(what, timeoutMs, since = this.now()) {
    const deadline = this.now() + timeoutMs;
    const start = this.slots.map((slot) => slot.issued);
    const wanted = Math.min(this.slots.length, 2 ** this.layout.workerBits);
    for (;;) {
      const issuing = this.slots.filter((slot, i) => slot.state === 'ready' && slot.issued > start[i]).length;
      if (issuing >= wanted) return true;
      if (this.now() > deadline) {
        this.notes.push(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what} (since ${since})`);
        return false;
      }
      await this.sleep(100);
    }
  }

  schedule() {
    const order = [];
    for (let round = 0; round < this.options.rounds; round++) {
      const kinds = [...this.options.kinds];
      for (let i = kinds.length - 1; i > 0; i--) {
        const j = Math.floor(this.random() * (i + 1));
        [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
      }
      order.push(...kinds);
    }
    return order;
  }

  async runFaults() {
    const { options } = this;
    const order = this.schedule();
    this.log(`  ${order.length} faults in this order: ${order.join(', ')}`);
    let id = 0;
    for (const kind of order) {
      id += 1;
      const entry = { id, kind, startedAt: Math.round(this.now()), outcome: 'injected', result: {}, notes: [] };
      this.faultLog.push(entry);
      this.log(`${this.stamp()}  #${id} ${kind}: ${CLUSTER_FAULT_TEXT[kind]}`);
      const ctx = {
        topology: this.topology,
        slot: this.slot,
        ttlMs: options.ttlMs,
        batch: options.batch,
        pauseMs: 100,
        processes: this.slots,
        random: (n) => Math.floor(this.random() * n),
        sleep: (ms) => this.sleep(ms),
        note: (message) => {
          entry.notes.push({ at: Math.round(this.now()), message });
          this.log(`${this.stamp()}  #${id} ${message}`);
        },
      };
      try {
        entry.result = await CLUSTER_FAULTS[kind](ctx);
      } catch (error) {
        entry.outcome = 'failed';
        entry.detail = error.message;
        this.log(`${this.stamp()}  #${id} failed: ${error.message}`);
      }
      entry.endedAt = Math.round(this.now());
      // Healed before the next fault: the cluster whole again, every holder issuing again.
      try {
        await this.topology.heal();
        await this.topology.waitHealthy(`the cluster to heal after #${id}`);
      } catch (error) {
        this.notes.push(`after #${id} ${kind}: ${error.message}`);
      }
      await this.waitAllIssuing(`every process to issue again after #${id}`, SETTLE_AFTER_LOSS_MS + 4 * options.ttlMs);
      entry.healedAt = Math.round(this.now());
      this.log(`${this.stamp()}  #${id} healed; every process issues IDs`);
      // Two renewals more: every holder has renewed on the healed cluster (and said what it took back) before the
      // next fault.
      await this.sleep(Math.max(1000, options.ttlMs / 2));
    }
  }

  async tearDown() {
    this.ending = true;
    const at = this.now();
    for (const slot of this.slots) {
      slot.tickIdle(at);
      slot.closeGap();
      slot.idleMark = null;
    }
    this.log(`${this.stamp()}  stopping: SIGTERM to every process`);
    try {
      await this.topology?.heal();
    } catch (error) {
      this.notes.push(`healing the cluster at the end failed: ${error.message}`);
    }
    await Promise.all(this.slots.map((slot) => slot.finish()));
    await Promise.all(this.slots.map((slot) => slot.closeLog()));
    await this.topology?.stop();
  }

  killEverything() {
    for (const slot of this.slots) slot.killNow();
    for (const pid of this.topology?.pids() ?? []) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }

  /** Every exit of a child during the run, and whether an error event came before it. */
  exits() {
    const found = [];
    for (const slot of this.slots) {
      const lines = readFileSync(join(this.dir, `${slot.name}.events.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean);
      let lastError = null;
      let held = false;
      for (const line of lines) {
        const event = JSON.parse(line);
        if (event.event === 'spawn') {
          lastError = null;
          held = false;
        }
        if (event.event === 'ready') held = true;
        if (event.event === 'error') lastError = event;
        if (event.event === 'exit' && !event.expected) {
          found.push({
            process: slot.name,
            at: event.at,
            code: event.code,
            signal: event.signal,
            error: lastError === null ? null : `${lastError.name}: ${lastError.message}`,
            held,
          });
        }
      }
    }
    return found;
  }

  /** Log lines and renewal errors of the children that speak of a key the script did not declare. */
  keyErrors() {
    const pattern = /non.local key|undeclared|not declared|Script attempted to access/i;
    const found = [];
    for (const slot of this.slots) {
      for (const error of this.errors.get(slot.name) ?? []) {
        if (pattern.test(error)) found.push({ process: slot.name, message: error });
      }
      const lines = readFileSync(join(this.dir, `${slot.name}.events.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean);
      for (const line of lines) {
        const event = JSON.parse(line);
        if (event.event === 'log' && pattern.test(event.message))
          found.push({ process: slot.name, message: event.message });
      }
    }
    return found;
  }

  /** The holders' recovery logs: "may have lost" warnings and "nothing … was lost" lines, with their times. */
  recoveryLogs() {
    const found = [];
    for (const slot of this.slots) {
      const lines = readFileSync(join(this.dir, `${slot.name}.events.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean);
      for (const line of lines) {
        const event = JSON.parse(line);
        if (event.event !== 'log') continue;
        if (event.message.includes('may have lost'))
          found.push({ process: slot.name, at: event.at, kind: 'may-have-lost', level: event.level });
        if (event.message.includes('nothing of this lease was lost'))
          found.push({ process: slot.name, at: event.at, kind: 'nothing-lost', level: event.level });
      }
    }
    return found;
  }

  /** Times without IDs of processes that held an ID: those from a boot (before its ready) are not a holder's. */
  holderGaps() {
    const gaps = [];
    for (const slot of this.slots) {
      const readies = this.readyAt.get(slot.name) ?? [];
      for (const gap of slot.gaps) {
        if (!readies.some((at) => at <= gap.from)) continue;
        gaps.push({ process: slot.name, from: Math.round(gap.from), ms: Math.round(gap.ms) });
      }
    }
    return gaps;
  }

  summarize() {
    const files = this.slots.flatMap((slot) =>
      slot.files.map(({ generation, file }) => ({ label: `${slot.name}.g${generation}`, file })),
    );
    const ids = analyseIds(files, this.layout);
    const refusals = {};
    for (const slot of this.slots) {
      for (const [key, count] of Object.entries(slot.refusals)) refusals[key] = (refusals[key] ?? 0) + count;
    }
    const verdict = judgeCluster({
      ids,
      exits: this.exits(),
      keyErrors: this.keyErrors(),
      recoveryLogs: this.recoveryLogs(),
      gaps: this.holderGaps(),
      faults: this.faultLog,
      ttlMs: this.options.ttlMs,
    });
    if (ids.issued === 0) this.notes.push('no ID was issued at all: the run checked nothing');
    return {
      profile: 'cluster',
      seed: this.options.seed,
      replay: this.replay(),
      processes: this.options.processes,
      ttlMs: this.options.ttlMs,
      nodeTimeoutMs: this.options.nodeTimeoutMs,
      durationS: Math.round(this.now() / 1000),
      ok: verdict.ok && ids.issued > 0 && this.notes.every((n) => !n.startsWith('timed out')),
      ids,
      refusals,
      ...verdict,
      faults: this.faultLog,
      notes: this.notes,
      directory: this.dir,
    };
  }
}

export async function runCluster(argv) {
  let options;
  try {
    options = parseClusterOptions(argv);
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  const run = new ClusterChaosRun(options);
  process.on('exit', () => run.killEverything());
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      run.killEverything();
      process.exit(130);
    });
  }
  try {
    await run.setUp();
    await run.runFaults();
  } catch (error) {
    run.log(`the chaos run failed: ${error.stack ?? error}`);
    await run.tearDown().catch(() => undefined);
    run.killEverything();
    return 2;
  }
  await run.tearDown();
  const summary = run.summarize();
  printClusterSummary(summary, (line) => run.log(line));
  if (options.json !== undefined) writeFileSync(options.json, `${JSON.stringify(summary, null, 2)}\n`);
  if (summary.ok && !options.keep) rmSync(run.dir, { recursive: true, force: true });
  else run.log(`ID files and per-process event logs kept in ${run.dir}`);
  return summary.ok ? 0 : 1;
}
