/**
 * Restarts of a fixed worker ID with a ceiling file, across real processes, beyond the single kill in
 * ceiling-file.e2e-spec.ts: each child issues IDs under worker 3 and records every one before anything else happens;
 * the test kills it with SIGKILL at a random moment between a raise of the ceiling and the next, three times, each
 * restart on a clock set back 2 s further than the last, and one child issuing in synchronous loops that never let
 * its event loop turn (so the timer cannot raise the ceiling and the call that reaches it must). No ID repeats, every
 * child issued only up to the ceiling on disk when it died, and every restart started above it. Without the file,
 * the same restart repeats IDs: the failure the file is there to prevent, shown so that the checks here can fail.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { ticksAtMs } from '../../lib/core/time-units.js';
import { IdWorker, analyse, sleep, waitUntil } from '../support/id-workers.js';
import { tempDirectory } from '../support/temp-dir.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/ceiling-restarts-worker.mjs', import.meta.url));
const layout = resolveLayout('default');
const codec = new SnowflakeCodec(layout);
const STEP_MS = 1000;
const temp = tempDirectory('snowflake-ceiling-restarts-');
const children: IdWorker[] = [];
let counter = 0;

afterAll(async () => {
  await Promise.all(children.map((child) => child.kill()));
  temp.remove();
});

interface ChildConfig {
  ceilingFile: string | { path: string; stepMs?: number; maxWaitMs?: number; ifMissing?: 'create' } | null;
  clockOffsetMs?: number;
  clockStartMs?: number;
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

const ceilingOf = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { ceilingTicks: number }).ceilingTicks;
const tickOf = (id: bigint) => ticksAtMs(layout, codec.decode(id).timestamp);

/** Waits until the ceiling on disk has been raised since `from`, then a random part of the time to the next raise. */
async function betweenRaises(child: IdWorker, file: string, from: number): Promise<void> {
  await waitUntil(
    () => ceilingOf(file) > from,
    10_000,
    'a raise of the ceiling',
    () => child.describe(),
  );
  await sleep(Math.floor(Math.random() * (STEP_MS / 2)));
}

describe('ceiling file: repeated kill -9 and restarts on clocks set back further each time', () => {
  it('repeats no ID, issues only up to the ceiling on disk, and starts every restart above it', async () => {
    const file = temp.path('worker-3.json');
    const ceilingFile = { path: file, stepMs: STEP_MS, maxWaitMs: 8000, ifMissing: 'create' as const };
    const runs: IdWorker[] = [];
    let floor = -1;

    for (const [clockOffsetMs, busyMs] of [
      [0, 0],
      [-2000, 2500],
      [-4000, 0],
    ]) {
      const child = start({ ceilingFile, clockOffsetMs, busyMs });
      await child.ready(30_000);
      runs.push(child);
      await betweenRaises(child, file, ceilingOf(file));
      await waitUntil(
        () => child.ids().length > 0,
        10_000,
        'IDs',
        () => child.describe(),
      );
      if (busyMs > 0) {
        // A loop longer than a step: the ceiling was reached inside it, where only the call itself could raise it.
        await waitUntil(() => tickOf(child.lastId()!) - tickOf(child.ids()[0]) > 2 * STEP_MS, 20_000, 'two steps');
      }
      await child.kill();
      const ceiling = ceilingOf(file);
      const ids = child.ids();
      expect(tickOf(ids[0])).toBeGreaterThan(floor);
      expect(tickOf(ids.at(-1)!)).toBeLessThanOrEqual(ceiling);
      expect(child.events.filter((e) => e.event === 'unavailable')).toEqual([]);
      floor = ceiling;
    }

    // Set back further than maxWaitMs: refused, naming the file, which keeps its ceiling.
    const refused = start({ ceilingFile, clockOffsetMs: -15_000 });
    const failure = await refused.bootError(30_000);
    expect(failure).toMatchObject({ name: 'CeilingFileError', problem: 'clock-behind', file });
    expect((await refused.exited).code).toBe(2);
    expect(refused.ids()).toEqual([]);
    expect(ceilingOf(file)).toBe(floor);

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
    expect(ceilingOf(file)).toBe(tickOf(lastIds.at(-1)!));

    const analysis = analyse(runs, codec);
    expect(analysis.duplicates).toEqual([]);
    expect(analysis.notIncreasing).toEqual([]);
    expect(analysis.overlaps).toEqual([]);
    expect(analysis.segments.map((s) => s.workerId)).toEqual([3, 3, 3, 3]);
    expect(analysis.total).toBeGreaterThan(1000);
  }, 120_000);

  it('a file of another worker stops the bootstrap, naming the file, and issues nothing', async () => {
    const file = temp.path('worker-3-foreign.json');
    const owner = start({ ceilingFile: { path: file, ifMissing: 'create' } });
    await owner.ready(30_000);
    await owner.stop();
    const other = start({ ceilingFile: file, workerId: 4 });
    const failure = await other.bootError(30_000);
    expect(failure).toMatchObject({ name: 'CeilingFileError', problem: 'foreign', file });
    expect(other.ids()).toEqual([]);
  }, 60_000);

  it('without the file, the same restart on a clock set back repeats IDs', async () => {
    // Both children issue in busy loops (a batch every millisecond, sequences from 0), so that the milliseconds they
    // share hold the same IDs whatever the machine's load does to their timers.
    const first = start({ ceilingFile: null, busyMs: 300 });
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
    // Started on a clock that reads 1 s before the first child's first ID when the module first reads it (however long
    // its boot takes on a loaded machine), it runs until it has passed the last.
    const second = start({ ceilingFile: null, busyMs: 300, clockStartMs: firstMs - 1000 });
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
