import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { faketimeLibrary } from '../support/faketime.js';

/**
 * The short form of `npm run chaos`: the runner (test/chaos/run.mjs, against dist/, which `npm run test:chaos` builds first)
 * with three processes for 75 s under a fixed seed that schedules nearly every fault kind of the plain mode: process
 * kills, graceful restarts, SIGSTOP and event-loop stalls past the TTL, partitions, latency and resets on one
 * process's proxy, Redis restarts empty and from an older snapshot, FLUSHALL, deletion of some of the namespace's
 * keys (also right as a process claims) and of a free ID's record, eviction under memory pressure, a rollback in the
 * same redis-server process, a process restarted with another contract, wall-clock steps both ways, and a clock that
 * ran ahead followed by a data loss. Every issued ID is recorded and checked, and every fault class's longest time
 * without IDs against its promise.
 */
const RUNNER = fileURLToPath(new URL('./run.mjs', import.meta.url));
const DURATION_S = 75;
/** Clock faults step a child's wall clock through libfaketime (Debian's `faketime`); without it they are skipped. */
const FAKETIME = faketimeLibrary();
/**
 * The schedule depends on the kinds that apply, so each mode has a seed of its own under which the 75 s draw
 * every kind below (found by calling makeSchedule as run.mjs does).
 */
const SEED = FAKETIME === undefined ? 4709 : 12056;
const CLOCK_KINDS = ['clock-loss'];
const PLAIN_KINDS = [
  'kill',
  'term',
  'stop',
  'stall',
  'partition',
  'redis-restart',
  'redis-snapshot',
  'flushall',
  'del-claim',
  'del-released',
  'evict',
  'rollback',
  'restart-config',
];
if (FAKETIME === undefined) {
  process.stderr.write(
    '\nSKIPPED: chaos run clock faults (clock steps, clock ahead then a data loss): libfaketime is not installed ' +
      '(apt-get install faketime); every other fault kind runs.\n',
  );
}

interface ChaosSummary {
  ok: boolean;
  ids: {
    issued: number;
    duplicates: { count: number; examples: unknown[]; byProcess: Record<string, number> };
    orderViolations: { count: number; examples: unknown[] };
  };
  refusals: Record<string, number>;
  faults: { injected: number; byKind: Record<string, { injected: number; skipped: number; failed: number }> };
  availability: {
    ok: boolean;
    byKind: Record<string, { ok: boolean; longestMs: number; promiseMs: number; over: unknown[] }>;
  };
  replay: string;
}

describe('chaos run (short form): faults on a seeded schedule, every ID recorded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'snowflake-chaos-spec-'));
  let runner: ChildProcess | undefined;

  afterAll(() => {
    // The runner leads its own process group (children, redis-server, proxies live in it or under it): whatever
    // happened, nothing it started may outlive the test.
    if (runner?.pid !== undefined && runner.exitCode === null && runner.signalCode === null) {
      try {
        process.kill(-runner.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('issues no duplicate and keeps every process in order', async () => {
    const summaryFile = join(dir, 'summary.json');
    const child = spawn(
      process.execPath,
      [
        RUNNER,
        '--duration',
        String(DURATION_S),
        '--processes',
        '3',
        '--seed',
        String(SEED),
        '--ttl',
        '2500',
        '--json',
        summaryFile,
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    runner = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));

    if (!existsSync(summaryFile)) throw new Error(`the chaos run wrote no summary (exit ${code}):\n${output}`);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as ChaosSummary;
    const report = `${summary.replay}\n${output.slice(-6000)}`;
    const injectedKinds = Object.entries(summary.faults.byKind)
      .filter(([, counts]) => counts.injected > 0)
      .map(([kind]) => kind);

    expect({ duplicates: summary.ids.duplicates.count, examples: summary.ids.duplicates.examples, report }).toEqual(
      expect.objectContaining({ duplicates: 0 }),
    );
    expect({ orderViolations: summary.ids.orderViolations.count, report }).toEqual(
      expect.objectContaining({ orderViolations: 0 }),
    );
    // Availability per fault class: no process went without IDs longer than its fault class promises.
    const overPromise = Object.entries(summary.availability.byKind)
      .filter(([, row]) => !row.ok)
      .map(([kind, row]) => ({ kind, longestMs: row.longestMs, promiseMs: row.promiseMs, over: row.over }));
    expect({ overPromise, report }).toEqual(expect.objectContaining({ overPromise: [] }));
    expect(summary.availability.ok).toBe(true);
    expect(code).toBe(0);
    expect(summary.ids.issued).toBeGreaterThan(10_000);
    expect(summary.faults.injected).toBeGreaterThanOrEqual(15);
    expect(injectedKinds).toEqual(
      expect.arrayContaining(FAKETIME === undefined ? PLAIN_KINDS : [...PLAIN_KINDS, ...CLOCK_KINDS]),
    );
    if (FAKETIME === undefined) {
      // The runner must say that it left the clock faults out, not pretend it ran them.
      expect(output).toContain('clock faults skipped');
      expect(injectedKinds.some((kind) => kind.startsWith('clock'))).toBe(false);
      expect(injectedKinds.length).toBeGreaterThanOrEqual(PLAIN_KINDS.length);
    } else {
      expect(injectedKinds.length).toBeGreaterThanOrEqual(15);
    }
  }, 150_000);
});
