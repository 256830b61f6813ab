import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The short form of `npm run chaos -- --profile cluster`: a real Redis Cluster of three primaries and three replicas
 * (cluster-node-timeout 1000 ms), four processes issuing IDs through the module (dist/, which `npm test` builds
 * first) with an ioredis Cluster client each, and one round of the Cluster's fault kinds against the primary that
 * serves the namespace's slot: a graceful CLUSTER FAILOVER, the primary killed, a promoted replica that missed
 * writes, the primary cut from the cluster bus while its clients still reach it, the slot moved under load in
 * small MIGRATE batches, and the primary paused past its replica's promotion, then run again before it learns it was
 * demoted. Every ID is recorded and checked.
 */
const RUNNER = fileURLToPath(new URL('./run.mjs', import.meta.url));
const SEED = 1;
const KINDS = ['failover', 'kill', 'lag', 'split', 'migrate', 'pause'];

interface ClusterSummary {
  ok: boolean;
  replay: string;
  ids: { issued: number; duplicates: { count: number; examples: unknown[] }; orderViolations: { count: number } };
  checks: Record<string, boolean>;
  perFault: {
    id: number;
    kind: string;
    outcome: string;
    outageMs: number | null;
    missedBytes: number | null;
    longestGapMs: number;
    promiseMs: number;
    ok: boolean;
  }[];
  exits: unknown[];
  silentExits: unknown[];
  keyErrors: unknown[];
  earlyWrites: unknown[];
  busyKeys: number;
  unexplained: unknown[];
  notes: string[];
}

describe('chaos run, Cluster profile (short form): failover, kill, lagging replica, split brain, slot move, pause', () => {
  const dir = mkdtempSync(join(tmpdir(), 'snowflake-chaos-cluster-spec-'));
  let runner: ChildProcess | undefined;

  afterAll(() => {
    // The runner leads its own process group: nothing it started may outlive the test.
    if (runner?.pid !== undefined && runner.exitCode === null && runner.signalCode === null) {
      try {
        process.kill(-runner.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('issues no duplicate, no process exits, no key is undeclared or written early, every fault within its promise', async () => {
    const summaryFile = join(dir, 'summary.json');
    const child = spawn(
      process.execPath,
      [RUNNER, '--profile', 'cluster', '--short', '--seed', String(SEED), '--json', summaryFile],
      { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    runner = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));

    if (!existsSync(summaryFile)) throw new Error(`the Cluster chaos run wrote no summary (exit ${code}):\n${output}`);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as ClusterSummary;
    const report = `${summary.replay}\n${output.slice(-6000)}`;

    expect({ duplicates: summary.ids.duplicates.count, examples: summary.ids.duplicates.examples, report }).toEqual(
      expect.objectContaining({ duplicates: 0 }),
    );
    expect({ orderViolations: summary.ids.orderViolations.count, report }).toEqual(
      expect.objectContaining({ orderViolations: 0 }),
    );
    // No instance exits: none is stopped by the run, so any exit is a finding (a silent one the worst).
    expect({ exits: summary.exits, silent: summary.silentExits, report }).toEqual(
      expect.objectContaining({ exits: [], silent: [] }),
    );
    // Every key a script touches is declared: no "non local key" error while the slot moves.
    expect({ keyErrors: summary.keyErrors, report }).toEqual(expect.objectContaining({ keyErrors: [] }));
    // No key of the slot appeared on the importing node before the move brought it (MIGRATE would meet BUSYKEY).
    expect({ earlyWrites: summary.earlyWrites, busyKeys: summary.busyKeys, report }).toEqual(
      expect.objectContaining({ earlyWrites: [], busyKeys: 0 }),
    );
    // Every kind ran, and each kept its holders' time without IDs within the promise its measured outage allows.
    expect(summary.perFault.map((f) => f.kind).sort()).toEqual([...KINDS].sort());
    const failed = summary.perFault.filter((f) => !f.ok);
    expect({ failed, report }).toEqual(expect.objectContaining({ failed: [] }));
    expect({ unexplained: summary.unexplained, report }).toEqual(expect.objectContaining({ unexplained: [] }));
    // Honest logs: a graceful failover and a slot move lose nothing, and no holder says they may have.
    expect({ honest: summary.checks.noLossWarningWithoutLoss, report }).toEqual(
      expect.objectContaining({ honest: true }),
    );
    // The lagging replica really missed writes, so its promotion was the case it stands for.
    const lag = summary.perFault.find((f) => f.kind === 'lag')!;
    expect({ missedBytes: lag.missedBytes, report }).toEqual(
      expect.objectContaining({ missedBytes: expect.any(Number) as number }),
    );
    expect(lag.missedBytes).toBeGreaterThan(0);
    expect(summary.ids.issued).toBeGreaterThan(10_000);
    expect({ notes: summary.notes, report }).toEqual(expect.objectContaining({ notes: [] }));
    expect(summary.ok).toBe(true);
    expect(code).toBe(0);
  }, 240_000);
});
