// The chaos run's child processes (worker.mjs): start, restart, signal, and the bookkeeping of what each reported.
// Times here are the run's monotonic clock (performance.now() relative to the run's start), never a child's wall
// clock, which libfaketime may have moved.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WORKER_SCRIPT = fileURLToPath(new URL('./worker.mjs', import.meta.url));
export const FAKETIME_LIBRARY = process.env.FAKETIME_LIBRARY ?? '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';

export function faketimeAvailable() {
  return existsSync(FAKETIME_LIBRARY);
}

/** libfaketime's relative offset format: `+1.500s`, `-3.000s`. */
function faketimeOffset(ms) {
  return `${ms < 0 ? '-' : '+'}${(Math.abs(ms) / 1000).toFixed(3)}s`;
}

/**
 * One child slot (c0, c1, …): the process currently running in it and the ones before it (generations), each
 * writing its IDs to its own file.
 */
export class ChildSlot {
  /**
   * @param {object} options
   * @param {number} options.index
   * @param {string} options.dir the run's directory
   * @param {() => number} options.now the run's clock, ms since its start
   * @param {(slot: ChildSlot) => object} options.config the worker config for the next start (without `out`)
   * @param {boolean} options.faketime start the process under libfaketime
   * @param {(line: string) => void} options.log
   */
  constructor({ index, dir, now, config, faketime, log }) {
    this.index = index;
    this.name = `c${index}`;
    this.dir = dir;
    this.now = now;
    this.makeConfig = config;
    this.faketime = faketime;
    this.log = log;
    this.clockFile = join(dir, `${this.name}.clock`);
    this.stallFile = join(dir, `${this.name}.stall`);
    this.events = createWriteStream(join(dir, `${this.name}.events.jsonl`), { flags: 'a' });
    /** Constant skew the process was started with, and a step on top of it, in ms. */
    this.skewMs = 0;
    this.stepMs = 0;
    this.writeClock();
    this.generation = 0;
    /** @type {{ generation: number, file: string, pid: number }[]} */
    this.files = [];
    this.child = undefined;
    /** down | starting | up | ready | stopping */
    this.state = 'down';
    this.paused = false;
    this.stalled = false;
    this.expectExit = false;
    this.ending = false;
    this.restartTimer = undefined;
    // Counts over all generations: the finished ones plus the current one's last report.
    this.issuedBefore = 0;
    this.issuedNow = 0;
    this.refusalsBefore = {};
    this.refusalsNow = {};
    this.bootErrors = {};
    this.bootErrorsNormal = {};
    this.crashes = 0;
    this.starts = 0;
    this.workerId = null;
    this.leaseState = null;
    // Time without IDs while running and not paused or stalled.
    this.idleMs = 0;
    this.idleFrom = null;
    this.idleMark = null;
    this.longestGap = { ms: 0, from: null };
    /** Every time without IDs of 0.5 s or more: { from, ms, excused } (run ms). */
    this.gaps = [];
    /** While set, this process is refused or waits by design (another contract): its gaps are not outages. */
    this.excused = false;
    /** Settings of the next starts that differ from the run's (`{ ttlMs }`, `{ redis: { fenceMarginMs } }`, …). */
    this.configOverride = undefined;
    this.onProgress = () => undefined;
    /** @type {Set<{ event: string, resolve: (seen: boolean) => void }>} */
    this.waiters = new Set();
  }

  /** Resolves true once the current process reports `event`, false if it exits or `timeoutMs` passes first. */
  waitFor(event, timeoutMs) {
    return new Promise((resolve) => {
      const waiter = {
        event,
        resolve: (seen) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(seen);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Lets a gated process claim. */
  go() {
    this.child?.stdin.write('go\n');
  }

  get issued() {
    return this.issuedBefore + this.issuedNow;
  }

  get refusals() {
    const all = { ...this.refusalsBefore };
    for (const [key, count] of Object.entries(this.refusalsNow)) all[key] = (all[key] ?? 0) + count;
    return all;
  }

  /** Running and able to take a signal (its handlers are installed). */
  get signalable() {
    return (this.state === 'up' || this.state === 'ready') && !this.expectExit;
  }

  get pid() {
    return this.child?.pid;
  }

  writeClock() {
    writeFileSync(this.clockFile, `${faketimeOffset(this.skewMs + this.stepMs)}\n`);
  }

  /** Steps this process's wall clock to `skew + stepMs` at once (libfaketime rereads the file on every call). */
  stepClock(stepMs) {
    this.stepMs = stepMs;
    this.writeClock();
  }

  /** Starts the next generation; with `gate`, it loads and then waits for {@link go} before it claims. */
  start({ gate = false } = {}) {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    if (this.ending || this.child !== undefined) return;
    this.generation += 1;
    this.starts += 1;
    const file = join(this.dir, `${this.name}.g${this.generation}.ids`);
    const base = this.makeConfig(this);
    const override = this.configOverride ?? {};
    const config = {
      ...base,
      ...override,
      redis: { ...base.redis, ...override.redis },
      out: file,
      stallFile: this.stallFile,
      gate,
    };
    const env = { ...process.env, NODE_OPTIONS: '' };
    if (this.faketime) {
      Object.assign(env, {
        LD_PRELOAD: FAKETIME_LIBRARY,
        FAKETIME_TIMESTAMP_FILE: this.clockFile,
        FAKETIME_NO_CACHE: '1',
        DONT_FAKE_MONOTONIC: '1',
      });
    }
    const child = spawn(process.execPath, [WORKER_SCRIPT, JSON.stringify(config)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env,
    });
    this.child = child;
    this.state = 'starting';
    this.expectExit = false;
    this.paused = false;
    this.stalled = false;
    this.issuedBefore += this.issuedNow;
    this.issuedNow = 0;
    for (const [key, count] of Object.entries(this.refusalsNow)) {
      this.refusalsBefore[key] = (this.refusalsBefore[key] ?? 0) + count;
    }
    this.refusalsNow = {};
    this.files.push({ generation: this.generation, file, pid: child.pid });
    this.record({
      event: 'spawn',
      generation: this.generation,
      pid: child.pid,
      skewMs: this.skewMs,
      ...(this.configOverride === undefined ? {} : { override: this.configOverride }),
    });
    child.stdin.on('error', () => undefined);
    let buffered = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() === '') continue;
        let event;
        try {
          event = JSON.parse(line);
        } catch {
          event = { event: 'text', line };
        }
        this.handle(child, event);
      }
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    // 'close' rather than 'exit': it comes after the last lines of stdout, so that the final counts are in.
    child.once('close', (code, signal) => this.exited(child, code, signal, stderr));
  }

  handle(child, event) {
    if (child !== this.child) return;
    const at = this.now();
    if (event.event !== 'stats') this.record(event);
    for (const waiter of [...this.waiters]) {
      if (waiter.event === event.event) waiter.resolve(true);
    }
    switch (event.event) {
      case 'up':
        this.state = 'up';
        // A boot is time without IDs (the first one waits for the fresh namespace to settle: the report judges it
        // against the first use). After a crash or a failed boot the time without IDs goes on (idleMark kept), so
        // that a process that keeps failing to boot shows one long outage, not many short ones.
        if (this.idleMark === null) this.beginIdle(at);
        break;
      case 'ready':
        this.state = 'ready';
        this.workerId = event.workerId;
        break;
      case 'error':
        if (event.phase === 'bootstrap') {
          const key = event.reason ? `${event.name}:${event.reason}` : event.name;
          this.bootErrors[key] = (this.bootErrors[key] ?? 0) + 1;
          // Separately for starts with the run's own settings: a refusal there is another instance's doing.
          if (this.configOverride === undefined) this.bootErrorsNormal[key] = (this.bootErrorsNormal[key] ?? 0) + 1;
        }
        break;
      case 'worker':
        this.workerId = event.workerId;
        break;
      case 'stall':
        this.setStalled(event.phase === 'begin', at);
        break;
      case 'stats': {
        this.refusalsNow = event.refusals;
        this.leaseState = event.state;
        this.workerId = event.workerId;
        this.tickIdle(at);
        if (event.issued > this.issuedNow) {
          this.issuedNow = event.issued;
          this.closeGap();
          this.idleFrom = at;
          this.onProgress(at);
        }
        break;
      }
      default:
        break;
    }
  }

  exited(child, code, signal, stderr) {
    if (child !== this.child) return;
    const at = this.now();
    const expected = this.expectExit || this.ending;
    this.tickIdle(at);
    if (expected) {
      this.closeGap();
      this.idleMark = null;
    }
    this.child = undefined;
    this.state = 'down';
    this.paused = false;
    this.stalled = false;
    this.record({ event: 'exit', code, signal, expected });
    for (const waiter of [...this.waiters]) waiter.resolve(false);
    if (expected) return;
    if (code !== 2) {
      this.crashes += 1;
      this.log(`${this.name} exited unexpectedly (code ${code}, signal ${signal}): ${stderr.trim().slice(-600)}`);
    }
    // A process that could not boot (no free worker ID, Redis away, its clock off) is started again later.
    this.restartTimer = setTimeout(() => this.start(), 1000);
  }

  /** Sends a signal; for SIGKILL and SIGTERM the exit is expected and awaited (SIGTERM: up to `timeoutMs`). */
  async signal(signal, timeoutMs = 15_000) {
    const child = this.child;
    if (child === undefined) return;
    if (signal === 'SIGSTOP') {
      this.tickIdle(this.now());
      this.paused = true;
    }
    if (signal === 'SIGCONT') {
      this.paused = false;
      if (this.idleMark !== null) this.idleMark = this.now();
    }
    if (signal !== 'SIGKILL' && signal !== 'SIGTERM') {
      child.kill(signal);
      return;
    }
    this.expectExit = true;
    this.state = 'stopping';
    // From here on the process is going away on purpose: its silence is no outage.
    this.tickIdle(this.now());
    this.closeGap();
    this.idleMark = null;
    const gone = new Promise((resolve) => child.once('close', resolve));
    if (this.paused && signal === 'SIGTERM') child.kill('SIGCONT');
    child.kill(signal);
    const timer = setTimeout(() => {
      this.log(`${this.name} did not stop within ${timeoutMs} ms of ${signal}: SIGKILL`);
      child.kill('SIGKILL');
    }, timeoutMs);
    await gone;
    clearTimeout(timer);
  }

  /** Stalls the event loop for `ms` (SIGUSR2; the duration is read from a file). */
  stall(ms) {
    writeFileSync(this.stallFile, String(ms));
    this.child?.kill('SIGUSR2');
  }

  /** Stops for good at the end of the run: resumes a paused process, then SIGTERM. */
  async finish() {
    this.ending = true;
    clearTimeout(this.restartTimer);
    const deadline = performance.now() + 10_000;
    while (this.child !== undefined && this.state === 'starting' && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (this.child === undefined) return;
    if (this.paused) await this.signal('SIGCONT');
    await this.signal(this.state === 'starting' ? 'SIGKILL' : 'SIGTERM');
  }

  /** Last resort (the run failed): no waiting. */
  killNow() {
    this.ending = true;
    clearTimeout(this.restartTimer);
    if (this.child === undefined) return;
    try {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }

  setStalled(stalled, at) {
    this.tickIdle(at);
    this.stalled = stalled;
  }

  // Idle time counts only while the process runs and is neither stopped nor stalled by the run.
  beginIdle(at) {
    this.idleMs = 0;
    this.idleFrom = at;
    this.idleMark = at;
  }

  tickIdle(at) {
    if (this.idleMark === null) return;
    if (!this.paused && !this.stalled) this.idleMs += at - this.idleMark;
    this.idleMark = at;
  }

  closeGap() {
    if (this.idleMs >= 500) this.gaps.push({ from: this.idleFrom, ms: this.idleMs, excused: this.excused });
    if (this.idleMs > this.longestGap.ms && !this.excused) {
      this.longestGap = { ms: this.idleMs, from: this.idleFrom };
    }
    this.idleMs = 0;
  }

  /** Marks the time without IDs from now on as by design (true), or ends that, closing what it covered (false). */
  excuse(on) {
    if (!on) {
      this.tickIdle(this.now());
      this.closeGap();
      this.idleMark = null;
    }
    this.excused = on;
  }

  record(event) {
    this.events.write(`${JSON.stringify({ at: Math.round(this.now()), ...event })}\n`);
  }

  async closeLog() {
    await new Promise((resolve) => this.events.end(resolve));
  }
}
