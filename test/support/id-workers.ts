import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SnowflakeCodec } from '../../lib/index.js';

/** The child script: boots the module with a Redis lease and records every ID it issues. */
export const ID_WORKER_SCRIPT = fileURLToPath(new URL('../lease/fixtures/id-worker.mjs', import.meta.url));

/** What a child is started with (see the script's header). */
export interface IdWorkerConfig {
  url: string;
  namespace: string;
  ttlMs: number;
  layout: Record<string, unknown>;
  /** IDs per `nextBatch` call. @default 8 */
  batch?: number;
  /** Pause between batches. @default 2 */
  intervalMs?: number;
  /** Load everything, then wait for {@link IdWorker.go} before claiming. */
  gate?: boolean;
  /** More lease options. */
  redis?: Record<string, unknown>;
  /** Run the module on a clock this far ahead of the machine's (negative: behind). */
  clockOffsetMs?: number;
}

/** A JSON line a child printed, with the child's wall-clock time `t`. */
export interface WorkerEvent {
  event: string;
  t: number;
  [key: string]: unknown;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One child process issuing IDs. */
export class IdWorker {
  readonly events: WorkerEvent[] = [];
  readonly exited: Promise<ExitInfo>;
  private exit: ExitInfo | undefined;
  private stderr = '';
  private paused = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    readonly name: string,
    readonly file: string,
    private readonly child: ChildProcess,
  ) {
    let buffered = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() === '') continue;
        try {
          this.events.push(JSON.parse(line) as WorkerEvent);
        } catch {
          this.events.push({ event: 'text', t: Date.now(), line });
        }
      }
      this.notify();
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    // The child ends itself when its stdin closes; nothing is written to it but `go`.
    child.stdin!.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exit === undefined;
  }

  /** Resolves with the first event (already seen or to come) that matches, or rejects on exit or timeout. */
  waitFor(predicate: (event: WorkerEvent) => boolean, timeoutMs: number, what = 'an event'): Promise<WorkerEvent> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.events.find(predicate);
        if (found !== undefined) return finish(() => resolve(found));
        if (this.exit !== undefined) {
          return finish(() =>
            reject(new Error(`${this.name} exited (${JSON.stringify(this.exit)}) before ${what}\n${this.describe()}`)),
          );
        }
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`${this.name}: no ${what} within ${timeoutMs} ms\n${this.describe()}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Waits for the child to hold a worker ID and returns it; rejects with the child's error if bootstrap failed. */
  async ready(timeoutMs: number): Promise<number> {
    const event = await this.waitFor((e) => e.event === 'ready' || e.event === 'error', timeoutMs, 'ready');
    if (event.event === 'error')
      throw new Error(`${this.name} failed to boot: ${String(event.name)}: ${String(event.message)}`);
    return event.workerId as number;
  }

  /** The bootstrap error the child reported. */
  async bootError(timeoutMs: number): Promise<WorkerEvent> {
    const event = await this.waitFor(
      (e) => e.event === 'ready' || e.event === 'error',
      timeoutMs,
      'a bootstrap result',
    );
    if (event.event !== 'error')
      throw new Error(`${this.name} booted (worker ${String(event.workerId)}) but should have failed`);
    return event;
  }

  /** Lets a gated child claim. */
  go(): void {
    this.child.stdin!.write('go\n');
  }

  /** SIGSTOP. */
  pause(): void {
    this.child.kill('SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT. */
  resume(): void {
    this.child.kill('SIGCONT');
    this.paused = false;
  }

  /** SIGKILL, and waits for the exit. */
  async kill(): Promise<ExitInfo> {
    if (this.exit !== undefined) return this.exit;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM (the graceful path: the child releases its lease), then SIGKILL if it has not exited in time. */
  async stop(timeoutMs = 10_000): Promise<ExitInfo> {
    if (this.exit !== undefined) return this.exit;
    if (this.paused) this.resume();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    const info = await this.exited;
    clearTimeout(timer);
    return info;
  }

  /** Every ID the child recorded, in the order it issued them. */
  ids(): bigint[] {
    if (!existsSync(this.file)) return [];
    const text = readFileSync(this.file, 'utf8');
    // Complete lines only: a running child may be writing the last one.
    const lines = text.split('\n').slice(0, -1);
    return lines.map((line) => BigInt(line));
  }

  /** The last ID the child recorded (reading only the end of the file), or undefined before the first. */
  lastId(): bigint | undefined {
    if (!existsSync(this.file)) return undefined;
    const fd = openSync(this.file, 'r');
    try {
      const size = fstatSync(fd).size;
      const length = Math.min(size, 256);
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, size - length);
      // Complete lines only: the first may be cut by the window, the last may still be being written.
      const lines = buffer
        .toString('utf8')
        .split('\n')
        .slice(size > length ? 1 : 0, -1);
      return lines.length === 0 ? undefined : BigInt(lines[lines.length - 1]);
    } finally {
      closeSync(fd);
    }
  }

  /** The messages of the child's log events. */
  logs(level?: string): string[] {
    return this.events
      .filter((e) => e.event === 'log' && (level === undefined || e.level === level))
      .map((e) => String(e.message));
  }

  /** The last events and stderr, for failure messages. */
  describe(): string {
    const tail = this.events
      .filter((e) => !(e.event === 'log' && e.context !== 'Snowflake'))
      .slice(-15)
      .map((e) => `  ${JSON.stringify(e)}`)
      .join('\n');
    return `${this.name} (pid ${this.child.pid}) events:\n${tail}${this.stderr === '' ? '' : `\nstderr:\n${this.stderr}`}`;
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** Starts children that record IDs into one temporary directory, and stops them all at the end. */
export class IdWorkerPool {
  readonly workers: IdWorker[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'snowflake-ids-'));
  private counter = 0;

  spawn(config: Omit<IdWorkerConfig, 'out'>, name = `worker-${++this.counter}`): IdWorker {
    const file = join(this.dir, `${name}.ids`);
    const child = spawn(process.execPath, [ID_WORKER_SCRIPT, JSON.stringify({ ...config, out: file })], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const worker = new IdWorker(name, file, child);
    this.workers.push(worker);
    return worker;
  }

  /** Children still running. */
  get running(): IdWorker[] {
    return this.workers.filter((w) => w.running);
  }

  /** Stops every child gracefully (resuming paused ones first), and returns how each exited. */
  async stopAll(timeoutMs = 10_000): Promise<Map<IdWorker, ExitInfo>> {
    const exits = await Promise.all(this.workers.map(async (w) => [w, await w.stop(timeoutMs)] as const));
    return new Map(exits);
  }

  /** Kills every child still running and removes the recorded files. */
  async dispose(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop(2000).catch(() => w.kill())));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A run of IDs one process issued under one worker ID without issuing under another in between. */
export interface Segment {
  worker: IdWorker;
  workerId: number;
  first: bigint;
  last: bigint;
  firstTimestamp: number;
  lastTimestamp: number;
  count: number;
}

/** What a set of recordings shows. */
export interface Analysis {
  total: number;
  duplicates: bigint[];
  /** Per-process runs in which IDs did not strictly increase. */
  notIncreasing: string[];
  /** Two holders' runs of one worker ID that overlap in time (the later holder did not start above the earlier). */
  overlaps: string[];
  segments: Segment[];
  idsOf: Map<IdWorker, bigint[]>;
}

/**
 * Reads every child's recording and checks: no ID twice across all processes; IDs strictly increase within each
 * run under one worker ID; and the runs of one worker ID by different holders follow each other in time, each
 * starting above the previous one's last ID.
 */
export function analyse(workers: IdWorker[], codec: SnowflakeCodec): Analysis {
  const seen = new Set<bigint>();
  const duplicates: bigint[] = [];
  const notIncreasing: string[] = [];
  const segments: Segment[] = [];
  const idsOf = new Map<IdWorker, bigint[]>();
  let total = 0;
  for (const worker of workers) {
    const ids = worker.ids();
    idsOf.set(worker, ids);
    total += ids.length;
    let segment: Segment | undefined;
    for (const id of ids) {
      if (seen.has(id)) duplicates.push(id);
      seen.add(id);
      const parts = codec.decode(id);
      if (segment === undefined || segment.workerId !== parts.workerId) {
        segment = {
          worker,
          workerId: parts.workerId,
          first: id,
          last: id,
          firstTimestamp: parts.timestamp,
          lastTimestamp: parts.timestamp,
          count: 1,
        };
        segments.push(segment);
        continue;
      }
      if (id <= segment.last && notIncreasing.length < 10) {
        notIncreasing.push(`${worker.name}: ${id} after ${segment.last} under worker ${parts.workerId}`);
      }
      segment.last = id;
      segment.lastTimestamp = parts.timestamp;
      segment.count++;
    }
  }
  const overlaps: string[] = [];
  const byWorker = new Map<number, Segment[]>();
  for (const s of segments) byWorker.set(s.workerId, [...(byWorker.get(s.workerId) ?? []), s]);
  for (const [workerId, list] of byWorker) {
    list.sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
    for (let i = 1; i < list.length; i++) {
      const [before, after] = [list[i - 1], list[i]];
      if (after.first <= before.last) {
        overlaps.push(
          `worker ${workerId}: ${after.worker.name} issued from ${after.firstTimestamp} while ${before.worker.name} ` +
            `issued until ${before.lastTimestamp}`,
        );
      }
    }
  }
  return { total, duplicates, notIncreasing, overlaps, segments, idsOf };
}

export { sleep, waitUntil } from './time.js';
