/**
 * Restart safety of a fixed worker ID with a ceiling file, across real processes: each child issues IDs under
 * worker 3 and records every one before anything else happens; the test kills it with SIGKILL at a random moment
 * between a raise of the ceiling and the next, and starts the next child on a clock set back. No ID repeats, every
 * child issues only up to the ceiling on disk when it died, and every restart starts above it. A restart whose
 * clock stands further back than `maxWaitMs` refuses to start, naming the file. Without the file, the same restarts
 * do repeat IDs: that is what the file is for.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { msAtTicks, ticksAtMs } from '../../lib/core/time-units.js';
import { parseCeilingRecord } from '../../lib/worker/ceiling-file.js';
import { IdWorker, analyse, sleep, waitUntil } from '../support/id-workers.js';
import { tempDirectory } from '../support/temp-dir.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/ceiling-worker.mjs', import.meta.url));
const layout = resolveLayout('default');
const codec = new SnowflakeCodec(layout);
const temp = tempDirectory('snowflake-ceiling-e2e-');
const children: IdWorker[] = [];
let counter = 0;

afterAll(async () => {
  await Promise.all(children.map((child) => child.kill()));
  temp.remove();
});

interface ChildConfig {
  ceilingFile: string | { path: string; aheadMs?: number; maxWaitMs?: number } | null;
  clockOffsetMs?: number;
  workerId?: number;
  busyMs?: number;
}

function start(config: ChildConfig): IdWorker {
  const name = `child-${++counter}`;
  const out = temp.path(`${name}.ids`);
  const child = spawn(process.execPath, [SCRIPT, JSON.stringify({ workerId: 3, layout: 'default', ...config, out })], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const worker = new IdWorker(name, out, child);
  children.push(worker);
  return worker;
}

const ceilingOf = (file: string) => parseCeilingRecord(file, readFileSync(file, 'utf8'));
const tickOf = (id: bigint) => ticksAtMs(layout, codec.decode(id).timestamp);

/** Waits until the child has raised the ceiling since `from`, then a random part of the time to the next raise. */
async function betweenRaises(child: IdWorker, file: string, from: number, aheadMs: number): Promise<void> {
  await waitUntil(
    () => ceilingOf(file).ceiling > from,
    10_000,
    'a raise of the ceiling',
    () => child.describe(),
  );
  await sleep(Math.floor(Math.random() * (aheadMs / 2)));
}

describe('ceiling file: kill -9 and restarts on a clock set back', () => {
  it('repeats no ID, issues only up to the ceiling on disk, and starts every restart above it', async () => {
    const file = temp.path('worker-3.json');
    const ceilingFile = { path: file, aheadMs: 1000, maxWaitMs: 8000 };
    const runs: IdWorker[] = [];
    let floor = -1;
    let waits = 0;

    // Killed between a raise and the next, each restart on a clock further back than the last. The second child
    // issues in synchronous loops of 1.5 s that never let its event loop turn, so it raises on the calling thread.
    for (const [clockOffsetMs, busyMs] of [
      [0, 0],
      [-2000, 1500],
      [-4000, 0],
    ]) {
      const child = start({ ceilingFile, clockOffsetMs, busyMs });
      await child.ready(30_000);
      runs.push(child);
      await betweenRaises(child, file, ceilingOf(file).ceiling, ceilingFile.aheadMs);
      await waitUntil(
        () => child.ids().length > 0,
        10_000,
        'IDs',
        () => child.describe(),
      );
      if (busyMs > 0) {
        await child.waitFor(
          (e) => e.event === 'raises' && Number(e.blocking) > 0,
          10_000,
          'a raise on the calling thread',
        );
      }
      await child.kill();
      const { ceiling, state } = ceilingOf(file);
      const ids = child.ids();
      expect(state).toBe('running');
      expect(tickOf(ids[0])).toBeGreaterThan(floor);
      expect(tickOf(ids.at(-1)!)).toBeLessThanOrEqual(ceiling);
      // Each restart read the crash from the file; when its clock stood behind the ceiling then (which depends on how
      // long the boot took), it waited for the clock to pass it.
      if (floor >= 0) {
        const read = child.events.find((e) => e.event === 'log' && /did not stop cleanly/.test(String(e.message)));
        expect(read).toBeDefined();
        const behind = msAtTicks(layout, floor) - (read!.t + clockOffsetMs);
        const waited = child.logs().some((message) => /Waiting \d+ ms for the clock to pass the ceiling/.test(message));
        if (behind > 50) expect(waited).toBe(true);
        if (waited) waits++;
      }
      floor = ceiling;
    }

    process.stderr.write(`restarts that waited for the clock: ${waits} of 2\n`);

    // Set back further than maxWaitMs: refused, naming the file, which stays as it was.
    const bytes = readFileSync(file, 'utf8');
    const refused = start({ ceilingFile, clockOffsetMs: -15_000 });
    const failure = await refused.bootError(30_000);
    expect(failure).toMatchObject({ name: 'CeilingAheadOfClockError', file });
    expect(String(failure.message)).toMatch(/ms behind the ceiling in .*ceilingFile.maxWaitMs/);
    expect((await refused.exited).code).toBe(2);
    expect(refused.ids()).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(bytes);

    // A last run on the right clock, stopped gracefully: the file then holds its exact last timestamp.
    const last = start({ ceilingFile });
    await last.ready(30_000);
    runs.push(last);
    await waitUntil(
      () => last.ids().length > 100,
      10_000,
      'IDs',
      () => last.describe(),
    );
    expect((await last.stop()).code).toBe(0);
    const lastIds = last.ids();
    expect(tickOf(lastIds[0])).toBeGreaterThan(floor);
    expect(ceilingOf(file)).toMatchObject({ state: 'stopped', ceiling: tickOf(lastIds.at(-1)!) });

    const analysis = analyse(runs, codec);
    expect(analysis.duplicates).toEqual([]);
    expect(analysis.notIncreasing).toEqual([]);
    expect(analysis.overlaps).toEqual([]);
    expect(analysis.segments.map((s) => s.workerId)).toEqual([3, 3, 3, 3]);
    expect(analysis.total).toBeGreaterThan(1000);
  }, 120_000);

  it('a file of another worker stops the bootstrap, naming the file', async () => {
    const file = temp.path('worker-3-foreign.json');
    const owner = start({ ceilingFile: file });
    await owner.ready(30_000);
    await owner.stop();
    const other = start({ ceilingFile: file, workerId: 4 });
    const failure = await other.bootError(30_000);
    expect(failure).toMatchObject({ name: 'CeilingFileForeignError', file });
    expect(other.ids()).toEqual([]);
  }, 60_000);

  it('without the file, the same restart on a clock set back repeats IDs (the failure the file prevents)', async () => {
    const first = start({ ceilingFile: null });
    await first.ready(30_000);
    await waitUntil(
      () => first.ids().length > 2000,
      10_000,
      'IDs',
      () => first.describe(),
    );
    await first.kill();
    const issued = first.ids();
    const firstMs = codec.decode(issued[0]).timestamp;
    const lastMs = codec.decode(issued.at(-1)!).timestamp;
    // Started on a clock set back to before the first child's first ID, it runs until it has passed the last.
    const second = start({ ceilingFile: null, clockOffsetMs: firstMs - Date.now() - 1000 });
    await second.ready(30_000);
    await waitUntil(
      () => {
        const id = second.lastId();
        return id !== undefined && codec.decode(id).timestamp > lastMs;
      },
      20_000,
      'the second child to pass the first one’s last ID',
      () => second.describe(),
    );
    await second.stop();
    expect(analyse([first, second], codec).duplicates.length).toBeGreaterThan(0);
  }, 90_000);
});
