// The chaos run: N processes issue IDs through the module (dist/) against redis-server processes of the run's own,
// each through a TCP proxy of its own, while faults are injected on a seeded schedule; at the end every recorded ID
// is checked for duplicates and per-process order.
//
//   npm run chaos -- --profile cluster [...]   a Redis Cluster of 3 primaries and 3 replicas (cluster-run.mjs)
//   npm run chaos -- [--duration 60] [--processes 4] [--seed N] [--faults kill,partition,clock,…] [--sentinel]
//                    [--ttl 2500] [--json summary.json] [--keep]
//
// Exit code 1 when any ID was issued twice or out of order, or a fault class kept a process without IDs longer than
// its availability promise (report.mjs, PROMISES); 2 when the run itself could not be carried out.
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ChildSlot, FAKETIME_LIBRARY, faketimeAvailable } from './children.mjs';
import { FAULTS, Skipped, describeFault } from './faults.mjs';
import { SETTLE_AFTER_LOSS_MS } from '../../dist/lease/lease.contract.js';
import { analyseIds, judgeAvailability, printSummary } from './report.mjs';
import { FAULT_GROUPS, FAULT_KINDS, makeSchedule, selectKinds } from './schedule.mjs';
import { PlainTopology, SentinelTopology } from './topology.mjs';

const USAGE = `Usage: node test/chaos/run.mjs [options]
  --duration <s>     how long the processes issue IDs (default 60)
  --processes <n>    child processes (default 4)
  --seed <n>         replays a fault schedule (default: random, printed)
  --faults <list>    comma-separated fault kinds or groups (default: all that apply)
                     kinds: ${Object.keys(FAULT_KINDS).join(', ')}
                     groups: ${FAULT_GROUPS.join(', ')}
  --sentinel         a primary, two replicas and three Sentinels instead of one redis-server
  --ttl <ms>         the lease TTL (default 2500)
  --json <file>      also write the summary as JSON
  --keep             keep the run's directory (ID files, per-process event logs) even when it passes
  --profile cluster  a Redis Cluster (3 primaries, 3 replicas) and its faults: --profile cluster --help`;

/** 4 worker bits: 16 worker IDs, enough for the processes and their restarts while old leases expire. */
const LAYOUT = { timestampBits: 41, datacenterBits: 0, workerBits: 4, sequenceBits: 12, timeUnitMs: 1 };
const NAMESPACE = 'chaos';
const KEY_PREFIX = `snowflake:{${NAMESPACE}:dc0}:`;
/** Well inside the fence margin (ttl / 5), which the module requires to cover the tolerance and the clock bound. */
const CLOCK_BACK_TOLERANCE_MS = 100;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '60' },
      processes: { type: 'string', default: '4' },
      seed: { type: 'string' },
      faults: { type: 'string' },
      sentinel: { type: 'boolean', default: false },
      ttl: { type: 'string', default: '2500' },
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
  // Unknown kinds are a usage error, before anything starts.
  selectKinds(values.faults, { sentinel: true, clock: true });
  return {
    durationS: number('duration', 5, 86_400),
    processes: number('processes', 1, 12),
    seed: values.seed === undefined ? randomInt(1, 2 ** 31) : number('seed', 0, 2 ** 32 - 1),
    faults: values.faults,
    sentinel: values.sentinel,
    ttlMs: number('ttl', 1000, 60_000),
    json: values.json,
    keep: values.keep,
  };
}

class ChaosRun {
  constructor(options) {
    this.options = options;
    this.dir = mkdtempSync(join(tmpdir(), 'snowflake-chaos-'));
    this.t0 = performance.now();
    this.endingRun = false;
    this.wakers = new Set();
    this.running = new Set();
    this.faultLog = [];
    this.notes = [];
    this.slots = [];
    this.progressShown = false;
    this.overallGap = { ms: 0, from: null };
    this.lastProgressAt = null;
    this.tty = process.stderr.isTTY === true;
  }

  now() {
    return performance.now() - this.t0;
  }

  ending() {
    return this.endingRun;
  }

  /** A wait that the end of the run cuts short, so that every fault heals at once. */
  sleep(ms) {
    if (this.endingRun) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, ms));
      this.wakers.add(wake);
    });
  }

  log(line) {
    if (this.tty && this.progressShown) process.stderr.write('\r\x1b[K');
    this.progressShown = false;
    process.stdout.write(`${line}\n`);
  }

  stamp(at = this.now()) {
    return `+${(at / 1000).toFixed(3).padStart(8)}s`;
  }

  async setUp() {
    const { options } = this;
    this.faketime = faketimeAvailable();
    const requested = selectKinds(options.faults, { sentinel: true, clock: true });
    if (!this.faketime && requested.some((kind) => FAULT_KINDS[kind].group === 'clock')) {
      this.notes.push(`clock faults skipped: libfaketime not found at ${FAKETIME_LIBRARY} (apt-get install faketime)`);
    }
    if (!options.sentinel && options.faults !== undefined && requested.some((k) => FAULT_KINDS[k].sentinelOnly)) {
      this.notes.push('Sentinel faults (failover, split-brain) need --sentinel: skipped');
    }
    this.kinds = selectKinds(options.faults, { sentinel: options.sentinel, clock: this.faketime });
    // Clock faults need every process under libfaketime; without them the processes run at full speed.
    this.useFaketime = this.faketime && this.kinds.some((kind) => FAULT_KINDS[kind].group === 'clock');
    const durationMs = options.durationS * 1000;
    this.durationMs = durationMs;
    this.schedule = makeSchedule({
      seed: options.seed,
      durationMs,
      processes: options.processes,
      ttlMs: options.ttlMs,
      toleranceMs: CLOCK_BACK_TOLERANCE_MS,
      kinds: this.kinds,
      // The fresh namespace settles once before the first claim: faults begin once the processes hold their IDs.
      warmupMs: Math.max(3000, SETTLE_AFTER_LOSS_MS + 2 * options.ttlMs),
      tailMs: Math.max(3000, 2 * options.ttlMs),
    });
    const replay = [
      'npm run chaos --',
      `--seed ${options.seed}`,
      `--duration ${options.durationS}`,
      `--processes ${options.processes}`,
      options.ttlMs === 2500 ? '' : `--ttl ${options.ttlMs}`,
      options.faults === undefined ? '' : `--faults ${options.faults}`,
      options.sentinel ? '--sentinel' : '',
    ]
      .filter(Boolean)
      .join(' ');
    this.replay = replay;
    this.log(`chaos run: seed ${options.seed} (replay: ${replay})`);
    this.log(`  directory ${this.dir}`);
    this.log(
      `  ${options.processes} processes, lease TTL ${options.ttlMs} ms, clockBackToleranceMs ${CLOCK_BACK_TOLERANCE_MS}, ` +
        `layout ${LAYOUT.workerBits} worker bits, ${this.useFaketime ? 'under libfaketime' : 'real clocks'}`,
    );
    for (const note of this.notes) this.log(`  note: ${note}`);
    this.log(`  ${this.schedule.length} faults scheduled over ${options.durationS} s, kinds: ${this.kinds.join(', ')}`);

    this.topology = options.sentinel ? new SentinelTopology(this.dir) : new PlainTopology(this.dir);
    await this.topology.start(options.processes);
    this.log(`  ${this.topology.describe()}`);

    this.t0 = performance.now();
    for (let index = 0; index < options.processes; index++) {
      const slot = new ChildSlot({
        index,
        dir: this.dir,
        now: () => this.now(),
        faketime: this.useFaketime,
        log: (line) => this.log(`${this.stamp()}  ${line}`),
        config: () => ({
          ...this.topology.connection(index),
          namespace: NAMESPACE,
          ttlMs: options.ttlMs,
          layout: LAYOUT,
          clockBackToleranceMs: CLOCK_BACK_TOLERANCE_MS,
          redis: { retryBackoffMs: 100, connectTimeoutMs: 1000 },
          intervalMs: 1,
          statsEveryMs: 100,
        }),
      });
      slot.onProgress = (at) => this.progress(at);
      this.slots.push(slot);
      slot.start();
    }
  }

  progress(at) {
    if (this.endingRun) return;
    if (this.lastProgressAt !== null && at - this.lastProgressAt > this.overallGap.ms) {
      this.overallGap = { ms: at - this.lastProgressAt, from: this.lastProgressAt };
    }
    this.lastProgressAt = at;
  }

  showProgress() {
    const up = this.slots.filter((s) => s.state === 'ready').length;
    const issued = this.slots.reduce((sum, s) => sum + s.issued, 0);
    const refused = this.slots.reduce((sum, s) => sum + Object.values(s.refusals).reduce((a, b) => a + b, 0), 0);
    const done = this.faultLog.length;
    const line =
      `[${(this.now() / 1000).toFixed(0).padStart(4)}s/${this.options.durationS}s] ` +
      `IDs ${issued.toLocaleString('en-US')} | faults ${done} (${this.running.size} active) | ` +
      `up ${up}/${this.slots.length} | refusals ${refused.toLocaleString('en-US')}`;
    if (this.tty) {
      process.stderr.write(`\r\x1b[K${line}`);
      this.progressShown = true;
    } else {
      process.stderr.write(`${line}\n`);
    }
  }

  async inject(fault) {
    const entry = { ...fault, startedAt: Math.round(this.now()), outcome: 'injected', detail: '', notes: [] };
    this.faultLog.push(entry);
    this.log(`${this.stamp()}  #${fault.id} ${describeFault(fault)}`);
    const ctx = {
      slots: this.slots,
      topology: this.topology,
      keyPrefix: KEY_PREFIX,
      idCount: 2 ** LAYOUT.workerBits,
      seed: this.options.seed,
      sleep: (ms) => this.sleep(ms),
      ending: () => this.ending(),
      result: (f, values) => Object.assign((entry.result ??= {}), values),
      note: (f, message) => {
        entry.notes.push({ at: Math.round(this.now()), message });
        this.log(`${this.stamp()}  #${f.id} ${message}`);
      },
    };
    try {
      const detail = await FAULTS[fault.kind](fault, ctx);
      entry.detail = detail ?? '';
      if (detail) this.log(`${this.stamp()}  #${fault.id} ${detail}`);
    } catch (error) {
      entry.outcome = error instanceof Skipped ? 'skipped' : 'failed';
      entry.detail = error.message;
      this.log(`${this.stamp()}  #${fault.id} ${entry.outcome}: ${error.message}`);
    }
    entry.endedAt = Math.round(this.now());
  }

  async runSchedule() {
    const ticker = setInterval(() => this.showProgress(), this.tty ? 1000 : 5000);
    try {
      for (const fault of this.schedule) {
        await this.sleep(fault.at - this.now());
        if (this.endingRun) break;
        const running = this.inject(fault);
        this.running.add(running);
        running.finally(() => this.running.delete(running));
      }
      await this.sleep(this.durationMs - this.now());
    } finally {
      clearInterval(ticker);
    }
  }

  /** Ends every fault early, heals everything, stops every process gracefully and the servers after them. */
  async tearDown() {
    this.endingRun = true;
    for (const wake of [...this.wakers]) wake();
    const at = this.now();
    for (const slot of this.slots) {
      slot.tickIdle(at);
      slot.closeGap();
      slot.idleMark = null;
    }
    this.showProgress();
    if (this.tty) process.stderr.write('\n');
    this.log(`${this.stamp()}  stopping: healing every fault, then SIGTERM to every process`);
    await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => setTimeout(r, 30_000))]);
    for (const slot of this.slots) {
      slot.stepMs = 0;
      slot.skewMs = 0;
      slot.writeClock();
    }
    try {
      await this.topology?.heal();
    } catch (error) {
      this.notes.push(`healing Redis at the end failed: ${error.message}`);
    }
    await Promise.all(this.slots.map((slot) => slot.finish()));
    await Promise.all(this.slots.map((slot) => slot.closeLog()));
    await this.topology?.stop();
  }

  /** Synchronous last resort (the runner is exiting): nothing this run started may outlive it. */
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

  summarize() {
    const files = this.slots.flatMap((slot) =>
      slot.files.map(({ generation, file }) => ({ label: `${slot.name}.g${generation}`, file })),
    );
    const ids = analyseIds(files, LAYOUT);
    const refusals = {};
    const bootFailures = {};
    for (const slot of this.slots) {
      for (const [key, count] of Object.entries(slot.refusals)) refusals[key] = (refusals[key] ?? 0) + count;
      for (const [key, count] of Object.entries(slot.bootErrors)) bootFailures[key] = (bootFailures[key] ?? 0) + count;
    }
    const byKind = {};
    const count = { injected: 0, skipped: 0, failed: 0 };
    for (const entry of this.faultLog) {
      byKind[entry.kind] ??= { injected: 0, skipped: 0, failed: 0 };
      byKind[entry.kind][entry.outcome] += 1;
      count[entry.outcome] += 1;
    }
    const fromS = (ms) => (ms === null ? null : Number((ms / 1000).toFixed(1)));
    const perProcess = {};
    for (const slot of this.slots) {
      perProcess[slot.name] = {
        ms: Math.round(slot.longestGap.ms),
        fromS: fromS(slot.longestGap.from),
        issued: ids.perProcess.filter((p) => p.process.startsWith(`${slot.name}.`)).reduce((s, p) => s + p.issued, 0),
        starts: slot.starts,
      };
    }
    if (ids.issued === 0) this.notes.push('no ID was issued at all: the run checked nothing');
    const gaps = this.slots.flatMap((slot) =>
      slot.gaps.filter((gap) => !gap.excused).map((gap) => ({ process: slot.name, from: gap.from, ms: gap.ms })),
    );
    const availability = judgeAvailability(gaps, this.faultLog, this.options.ttlMs);
    // A child started with the run's settings refused for another contract: the misconfigured one locked it out.
    const lockedOut = this.slots
      .map((slot) => ({ name: slot.name, refused: slot.bootErrorsNormal?.LeaseConfigMismatchError ?? 0 }))
      .filter((s) => s.refused > 0);
    for (const { name, refused } of lockedOut) {
      this.notes.push(`${name}, with the run's settings, was refused ${refused} time(s) for another contract`);
    }
    return {
      seed: this.options.seed,
      replay: this.replay,
      durationS: this.options.durationS,
      processes: this.options.processes,
      ttlMs: this.options.ttlMs,
      mode: this.options.sentinel ? 'sentinel' : 'plain',
      faketime: this.useFaketime,
      kinds: this.kinds,
      ok: ids.duplicates.count === 0 && ids.orderViolations.count === 0 && availability.ok,
      ids,
      refusals,
      bootFailures,
      crashes: this.slots.reduce((sum, s) => sum + s.crashes, 0),
      gaps: { overall: { ms: Math.round(this.overallGap.ms), fromS: fromS(this.overallGap.from) }, perProcess },
      availability,
      faults: { ...count, byKind, log: this.faultLog },
      notes: this.notes,
      directory: this.dir,
    };
  }
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  const run = new ChaosRun(options);
  process.on('exit', () => run.killEverything());
  let interrupted = 0;
  const interrupt = (signal) => {
    interrupted += 1;
    if (interrupted > 1) process.exit(130);
    run.log(`${signal}: ending the run early (again to abort)`);
    run.notes.push(`ended early by ${signal}`);
    run.endingRun = true;
    for (const wake of [...run.wakers]) wake();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);

  try {
    await run.setUp();
    await run.runSchedule();
  } catch (error) {
    run.log(`the chaos run failed: ${error.stack ?? error}`);
    await run.tearDown().catch(() => undefined);
    run.killEverything();
    return 2;
  }
  await run.tearDown();
  const summary = run.summarize();
  printSummary(summary, (line) => run.log(line));
  if (options.json !== undefined) writeFileSync(options.json, `${JSON.stringify(summary, null, 2)}\n`);
  if (summary.ok && !options.keep) rmSync(run.dir, { recursive: true, force: true });
  else run.log(`ID files and per-process event logs kept in ${run.dir}`);
  return summary.ok ? 0 : 1;
}

// The Cluster profile has a runner of its own: its faults act on a cluster, not on one process's proxy.
const profile = process.argv.slice(2).find((arg, i, all) => arg.startsWith('--profile=') || all[i - 1] === '--profile');
if (profile !== undefined && profile.replace('--profile=', '') !== 'cluster') {
  process.stderr.write(`unknown --profile ${profile.replace('--profile=', '')}: the one profile is cluster\n`);
  process.exit(2);
}
if (profile !== undefined) {
  const { runCluster } = await import('./cluster-run.mjs');
  process.exit(await runCluster(process.argv.slice(2).map((arg) => arg.replace(/^--profile=.*/, '--profile=cluster'))));
}
process.exit(await main());
