import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolveLayout } from '../../lib/core/layout.js';
import { msAtTicks, ticksAtMs } from '../../lib/core/time-units.js';
import {
  CeilingFileError,
  IdService,
  SnowflakeConfigError,
  SnowflakeModule,
  type SnowflakeModuleOptions,
} from '../../lib/index.js';
import { tempDirectory } from '../support/temp-dir.js';
import { SteppableClock, sleep } from '../support/time.js';

const LAYOUT = { workerBits: 4, datacenterBits: 0 } as const;
const layout = resolveLayout(LAYOUT);
const STEP_MS = 600;

describe('ceilingFile: restart safety for a fixed worker ID', () => {
  const temp = tempDirectory('snowflake-ceiling-');
  const modules: TestingModule[] = [];
  let n = 0;
  let file: string;

  beforeEach(() => {
    file = temp.path(`worker-${++n}.json`);
  });

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close().catch(() => undefined)));
  });

  afterAll(() => temp.remove());

  async function boot(options: Partial<SnowflakeModuleOptions> = {}): Promise<IdService> {
    const module = await Test.createTestingModule({
      imports: [
        SnowflakeModule.forRoot({
          layout: LAYOUT,
          workerId: 3,
          ceilingFile: { path: file, stepMs: STEP_MS, ifMissing: 'create' },
          ...options,
        }),
      ],
    }).compile();
    modules.push(module);
    await module.init();
    return module.get(IdService);
  }

  const recorded = (): Record<string, unknown> => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const ceiling = () => recorded().ceilingTicks as number;
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    );

  it('writes the ceiling ahead of the first ID, and raises it in the background as time passes', async () => {
    const ids = await boot();
    const first = ids.decode(ids.next()).timestamp;
    expect(recorded()).toMatchObject({ format: 'nestjs-snowflake/worker-ceiling', workerId: 3, datacenterId: 0 });
    const written = ceiling();
    // One step ahead of the clock, and above the first ID.
    expect(written).toBeGreaterThan(ticksAtMs(layout, first));
    expect(written).toBeLessThanOrEqual(ticksAtMs(layout, Date.now()) + STEP_MS);

    // IDs for two steps: the ceiling moves ahead of them, and no ID is ever above what the file said before it.
    const issued: number[] = [];
    const deadline = Date.now() + 2 * STEP_MS;
    while (Date.now() < deadline) {
      // Async: on a loaded machine a write may land after the clock reached the ceiling, and then IDs wait for it.
      issued.push(...(await ids.nextBatchAsync(50)).map((id) => ids.decode(id).timestamp));
      expect(ticksAtMs(layout, issued[issued.length - 1])).toBeLessThanOrEqual(ceiling());
      await sleep(5);
    }
    expect(ceiling()).toBeGreaterThan(written + STEP_MS);
    expect(ceiling()).toBeGreaterThan(ticksAtMs(layout, Math.max(...issued)));
  });

  it('never issues above the last ceiling on disk: while writes fail IDs wait at it, and resume once a write succeeds', async () => {
    const ids = await boot();
    ids.next();
    const lastWritten = ceiling();
    // The file's place taken by a non-empty directory: every rename onto it fails from now on.
    rmSync(file);
    mkdirSync(`${file}/blocked`, { recursive: true });
    const issued: number[] = [];
    let refusal: unknown;
    const deadline = Date.now() + 3 * STEP_MS;
    while (Date.now() < deadline && refusal === undefined) {
      try {
        issued.push(...ids.nextBatch(20).map((id) => ticksAtMs(layout, ids.decode(id).timestamp)));
      } catch (error) {
        refusal = error;
      }
      await sleep(5);
    }
    expect(refusal).toMatchObject({ name: 'WorkerUnavailableError', reason: 'ceiling' });
    expect(Math.max(...issued)).toBeLessThanOrEqual(lastWritten);

    // The disk is back: the retry writes a new ceiling, and waiting callers get their IDs.
    rmSync(file, { recursive: true });
    const resumed = ids.decode(await ids.nextAsync()).timestamp;
    expect(ticksAtMs(layout, resumed)).toBeGreaterThan(Math.max(...issued));
    expect(ceiling()).toBeGreaterThanOrEqual(ticksAtMs(layout, resumed));
  });

  it('records the exact last timestamp at a graceful stop, so that a restart waits for nothing', async () => {
    const ids = await boot();
    const last = ids.decode(ids.next()).timestamp;
    await modules.pop()!.close();
    expect(ceiling()).toBe(ticksAtMs(layout, last));
    const started = performance.now();
    const again = await boot();
    expect(performance.now() - started).toBeLessThan(STEP_MS);
    expect(again.decode(again.next()).timestamp).toBeGreaterThan(last);
  });

  it('restarts above the old ceiling with the clock set back: waits when the gap is small', async () => {
    const before = await boot();
    const issued = before.nextBatch(100);
    // A crash: the file keeps the raised ceiling, not the exact last timestamp.
    const crashed = readFileSync(file, 'utf8');
    await modules.pop()!.close();
    writeFileSync(file, crashed);
    const ceilingMs = msAtTicks(layout, (JSON.parse(crashed) as { ceilingTicks: number }).ceilingTicks);

    const clock = new SteppableClock(-500);
    const behindMs = ceilingMs - clock.now();
    // The crashed process's ceiling stands about a step ahead of the real clock, and this clock is 500 ms behind it.
    expect(behindMs).toBeGreaterThan(500);
    const started = performance.now();
    const after = await boot({ clock, ceilingFile: { path: file, stepMs: STEP_MS, maxWaitMs: 3000 } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(behindMs - 20);
    const next = after.nextBatch(100);
    const lastBefore = issued[issued.length - 1];
    expect(next[0]).toBeGreaterThan(lastBefore);
    expect(after.decode(next[0]).timestamp).toBeGreaterThan(ceilingMs);
    expect(new Set([...issued, ...next]).size).toBe(200);
  });

  it('refuses to start when the clock stands further behind the ceiling than maxWaitMs, naming the file and the fix', async () => {
    const before = await boot();
    before.next();
    const crashed = readFileSync(file, 'utf8');
    await modules.pop()!.close();
    writeFileSync(file, crashed);

    const started = performance.now();
    const error = await failure(boot({ clock: new SteppableClock(-5000) }));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(CeilingFileError);
    expect(error).toMatchObject({ problem: 'clock-behind', file });
    const message = (error as Error).message;
    expect(message).toContain(file);
    expect(message).toContain('ceilingFile.maxWaitMs');
    expect(message).toContain('Correct the clock');
    // Nothing was written over the ceiling it refused to go below.
    expect(readFileSync(file, 'utf8')).toBe(crashed);
  });

  it.each([
    ['not JSON', 'garbage\n'],
    ['cut short', '{"format":"nestjs-snowflake/worker-ceiling","version":1,"layout":"41/0/4/'],
    ['another format', '{"ceiling": 12345}'],
    ['a ceiling that is not a number', ''],
    ['empty', ''],
  ])('refuses a corrupt file (%s), naming it', async (what, text) => {
    const body =
      what === 'a ceiling that is not a number'
        ? JSON.stringify({
            format: 'nestjs-snowflake/worker-ceiling',
            version: 1,
            layout: 'x',
            workerId: 3,
            datacenterId: 0,
            ceilingTicks: 'soon',
          })
        : text;
    writeFileSync(file, body);
    const error = await failure(boot());
    expect(error).toBeInstanceOf(CeilingFileError);
    expect(error).toMatchObject({ problem: 'corrupt', file });
    expect((error as Error).message).toContain('Restore it from a backup');
    expect(readFileSync(file, 'utf8')).toBe(body);
  });

  it('refuses a file of another worker, datacenter or layout', async () => {
    await boot();
    await modules.pop()!.close();
    const foreign = readFileSync(file, 'utf8');
    for (const options of [
      { workerId: 4 },
      { datacenterId: 1, layout: { workerBits: 4, datacenterBits: 1 } },
      { layout: { workerBits: 5, datacenterBits: 0 } },
    ]) {
      writeFileSync(file, foreign);
      const error = await failure(boot(options));
      expect(error).toBeInstanceOf(CeilingFileError);
      expect(error).toMatchObject({ problem: 'foreign', file });
      expect((error as Error).message).toContain('belongs to worker 3 of datacenter 0');
      expect((error as Error).message).toContain('Every worker needs a file of its own');
    }
  });

  it('fails at start when the ceiling cannot be written, naming the file', async () => {
    file = temp.path('missing-directory/worker.json');
    const error = await failure(boot());
    expect(error).toMatchObject({ name: 'CeilingFileError', problem: 'unwritable', file });
    expect((error as Error).message).toContain('directory exists');
    mkdirSync(temp.path('missing-directory'));
    await boot();
  });

  it.each([
    ['ceilingFile', { workerId: undefined, redis: { url: 'redis://127.0.0.1:1' } }],
    ['ceilingFile.stepMs', { ceilingFile: { path: '/tmp/x.json', stepMs: 10 } }],
    ['ceilingFile.maxWaitMs', { ceilingFile: { path: '/tmp/x.json', maxWaitMs: -1 } }],
    ['ceilingFile.path', { ceilingFile: { path: '' } }],
    ['ceilingFile.stepsMs', { ceilingFile: { path: '/tmp/x.json', stepsMs: 100 } }],
    ['ceilingFile.ifMissing', { ceilingFile: { path: '/tmp/x.json', ifMissing: 'yes' } }],
    [
      'workerLock',
      { workerId: undefined, ceilingFile: undefined, redis: { url: 'redis://127.0.0.1:1' }, workerLock: {} },
    ],
    ['workerLock', { workerLock: true }],
    ['workerLock.dir', { workerLock: { dir: '' } }],
    ['workerLock.directory', { workerLock: { directory: '/tmp' } }],
  ])('rejects a bad %s at bootstrap', async (option, options) => {
    const error = await failure(boot(options as Partial<SnowflakeModuleOptions>));
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    expect((error as SnowflakeConfigError).option).toBe(option);
  });
});
