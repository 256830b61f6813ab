import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolveLayout } from '../../lib/core/layout.js';
import { msAtTicks } from '../../lib/core/time-units.js';
import { SnowflakeCodec } from '../../lib/index.js';
import { IdWorker } from '../support/id-workers.js';
import { tempDirectory } from '../support/temp-dir.js';
import { sleep } from '../support/time.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/ceiling-worker.mjs', import.meta.url));
const LAYOUT = { workerBits: 4, datacenterBits: 0 };
const codec = new SnowflakeCodec(resolveLayout(LAYOUT));
const STEP_MS = 1000;

/**
 * A fixed worker ID with a ceiling file, in child processes that record every ID they issue: a kill -9 at any moment
 * (between one write of the ceiling and the next), then a restart with the clock set back, issues no ID twice.
 */
describe('ceilingFile across a kill -9 and a clock set back (child processes)', () => {
  const temp = tempDirectory('snowflake-ceiling-e2e-');
  const workers: IdWorker[] = [];
  let n = 0;

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    temp.remove();
  });

  function start(config: Record<string, unknown>): IdWorker {
    const out = temp.path(`run-${++n}.ids`);
    const child = spawn(process.execPath, [SCRIPT, JSON.stringify({ layout: LAYOUT, workerId: 5, out, ...config })], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const worker = new IdWorker(`run-${n}`, out, child);
    workers.push(worker);
    return worker;
  }

  it('gives no duplicate after a kill -9 and a restart with the clock set back, and refuses a gap beyond the wait', async () => {
    const file = temp.path('worker-5.json');
    const ceilingFile = { path: file, stepMs: STEP_MS, maxWaitMs: 4000, ifMissing: 'create' };

    const first = start({ ceilingFile });
    expect(await first.ready(20_000)).toBe(5);
    // Several raises of the ceiling, then a kill at whatever moment that is: between a write and the next.
    await sleep(2.3 * STEP_MS);
    await first.kill();
    const before = first.ids();
    expect(before.length).toBeGreaterThan(1000);
    const lastBefore = before[before.length - 1];
    const ceiling = JSON.parse(readFileSync(file, 'utf8')) as { ceilingTicks: number };
    const ceilingMs = msAtTicks(codec.layout, ceiling.ceilingTicks);
    // Written ahead: the file covers every ID the killed process issued.
    expect(ceilingMs).toBeGreaterThanOrEqual(codec.decode(lastBefore).timestamp);

    // The machine comes back with its clock 1.5 s behind: the new process waits for it to pass the ceiling.
    const second = start({ ceilingFile, clockOffsetMs: -1500 });
    await second.ready(20_000);
    await sleep(STEP_MS);
    await second.stop();
    const after = second.ids();
    expect(after.length).toBeGreaterThan(100);

    const all = [...before, ...after];
    expect(new Set(all).size).toBe(all.length);
    expect(after[0]).toBeGreaterThan(lastBefore);
    expect(codec.decode(after[0]).timestamp).toBeGreaterThan(ceilingMs);

    // A clock 10 s behind the ceiling the second process left: a typed error naming the file, and nothing issued.
    const third = start({ ceilingFile, clockOffsetMs: -10_000 });
    const error = await third.bootError(20_000);
    expect(error).toMatchObject({ name: 'CeilingFileError', problem: 'clock-behind' });
    expect(String(error.message)).toContain(file);
    expect((await third.exited).code).toBe(2);
    expect(third.ids()).toEqual([]);
  });
});
