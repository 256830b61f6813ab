/**
 * A fixed worker ID handed from one holder to the next on one host, with no clock step and no ceiling file: the next
 * holder never starts inside the time unit the one before may have issued in (real processes, a copy of the library).
 *
 * - A process restarted through the host lock takes its floor at the unit it took the lock in and waits it out: with
 *   a 1 s time unit, a restart within the same second repeated the first process's IDs (sequence 0 again).
 * - Two copies of the library in one process (a bundle and a package, a reload) share the process's mark of what a
 *   stopped app issued on the system clock: an app of one copy continues above the IDs of the other's.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { resolveLayout } from '../../lib/core/layout.js';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { tempDirectory } from '../support/temp-dir.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/static-handover-app.mjs', import.meta.url));
const THREADS = fileURLToPath(new URL('./fixtures/thread-handover.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const temp = tempDirectory('snowflake-static-handover-');
// The copy of the library lives inside the project, so that it resolves the same packages.
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const inProject = tempDirectory('library-copy-', join(ROOT, '.tmp'));

afterAll(() => {
  temp.remove();
  inProject.remove();
});

async function holder(config: Record<string, unknown>): Promise<bigint[][]> {
  const { stdout } = await run(process.execPath, [SCRIPT, JSON.stringify(config)], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  // Nest's logger writes to stdout too: the result is the line the fixture marks.
  const line = stdout.split('\n').find((text) => text.startsWith('ISSUED '))!;
  return (JSON.parse(line.slice('ISSUED '.length)) as string[][]).map((ids) => ids.map(BigInt));
}

describe('a fixed worker ID handed to the next holder on the host', () => {
  it('a process restarted within the same second (1 s time unit) starts in the next second, above every ID before', async () => {
    const layoutOptions = { timeUnitMs: 1000 as const, timestampBits: 41, workerBits: 10, sequenceBits: 12 };
    const codec = new SnowflakeCodec(resolveLayout(layoutOptions));
    const workerLock = { dir: temp.path('locks') };
    // The second process's clock starts 300 ms into the second the first one issued in.
    const common = { workerId: 3, workerLock, layout: layoutOptions, count: 20 };
    const [before] = await holder({ ...common, clockAtMs: (Math.floor(Date.now() / 1000) + 10) * 1000 + 100 });
    const second = codec.decode(before.at(-1)!).timestamp;
    const [after] = await holder({ ...common, clockAtMs: second + 300 });
    const repeated = after.filter((id) => before.includes(id));
    expect({ repeated: repeated.length, lowest: after[0] > before.at(-1)! }).toEqual({ repeated: 0, lowest: true });
    expect(codec.decode(after[0])).toMatchObject({ timestamp: second + 1000, sequence: 0, workerId: 3 });
  });

  it('worker threads handing the ID back and forth (js-safe, 10 ms unit) never start inside the unit before', async () => {
    // Found by a review of the first version, which took a clock unmoved after a 1 ms timer for a test's fixed clock:
    // Node's timers run on whole milliseconds of the loop's time, and 2 to 3 rounds in 100 repeated IDs.
    const { stdout } = await run(
      process.execPath,
      [THREADS, JSON.stringify({ dir: temp.path('thread-locks'), rounds: 150 })],
      { env: { ...process.env, NODE_OPTIONS: '' } },
    );
    const line = stdout.split('\n').find((text) => text.startsWith('HANDED '))!;
    expect(JSON.parse(line.slice('HANDED '.length))).toEqual({ rounds: 150, repeated: 0, below: 0 });
  });

  it('two copies of the library in one process: an app of the second continues above the first one’s IDs', async () => {
    const copy = inProject.path('copy');
    cpSync(`${ROOT}/dist`, `${copy}/dist`, { recursive: true });
    writeFileSync(`${copy}/package.json`, JSON.stringify({ type: 'module' }));
    const libraries = [pathToFileURL(`${ROOT}/dist/index.js`).href, pathToFileURL(`${copy}/dist/index.js`).href];
    let repeated = 0;
    let below = 0;
    // js-safe's 10 ms unit: the second app starts well within the unit the first issued in.
    for (let round = 0; round < 8; round++) {
      const [first, second] = await holder({ workerId: 7, workerLock: false, layout: 'js-safe', count: 50, libraries });
      repeated += second.filter((id) => first.includes(id)).length;
      below += second.filter((id) => id <= first.at(-1)!).length;
    }
    expect({ repeated, below }).toEqual({ repeated: 0, below: 0 });
  });
});
