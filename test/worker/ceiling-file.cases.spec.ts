/**
 * More cases of a fixed worker ID with a ceiling file, in one process, beside ceiling-file.spec.ts: every way a file
 * can fail to be this worker's ceiling is an error naming it, and leaves it as it was; a synchronous loop that never
 * lets the event loop turn still issues only up to the ceiling on disk, without a refusal; a stop during the start's
 * wait for the clock never lowers the recorded ceiling; and nextAsync() called during the start waits for it.
 */
import 'reflect-metadata';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ticksAtMs } from '../../lib/core/time-units.js';
import {
  CeilingFileError,
  IdService,
  SNOWFLAKE_WORKER_SOURCE,
  SnowflakeModule,
  type SnowflakeModuleOptions,
} from '../../lib/index.js';
import type { CeilingFileWorkerSource } from '../../lib/worker/ceiling-file.source.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { tempDirectory } from '../support/temp-dir.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const temp = tempDirectory('snowflake-ceiling-cases-');
afterAll(() => temp.remove());

let counter = 0;
const freshFile = () => temp.path(`worker-${++counter}.json`);
const ceilingOf = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { ceilingTicks: number }).ceilingTicks;
const tickOf = (ids: IdService, id: bigint) => ticksAtMs(ids.layout, ids.decode(id).timestamp);

async function boot(options: SnowflakeModuleOptions) {
  const moduleRef = await Test.createTestingModule({ imports: [SnowflakeModule.forRoot(options)] })
    .setLogger(quiet)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, ids: app.get(IdService), source: app.get<CeilingFileWorkerSource>(SNOWFLAKE_WORKER_SOURCE) };
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe('ceilingFile: files that are not this worker’s ceiling', () => {
  /** The text of a ceiling file worker 3 wrote and left at a graceful stop. */
  async function written(options: Omit<SnowflakeModuleOptions, 'ceilingFile'> = { workerId: 3 }): Promise<string> {
    const file = freshFile();
    const { app, ids } = await boot({ ...options, ceilingFile: { path: file, ifMissing: 'create' } });
    ids.next();
    await app.close();
    return file;
  }

  it.each<[string, (valid: string) => string]>([
    ['an empty file', () => ''],
    ['text that is not JSON', () => 'ceiling=12\n'],
    ['a record cut short', (valid) => valid.slice(0, Math.floor(valid.length / 2))],
    ['a JSON array', () => '[]'],
    ['JSON null', () => 'null'],
    ['another format', (valid) => valid.replace('nestjs-snowflake/worker-ceiling', 'other')],
    ['a newer version', (valid) => valid.replace('"version":1', '"version":2')],
    ['a ceiling written as a string', (valid) => valid.replace(/"ceilingTicks":(\d+)/, '"ceilingTicks":"$1"')],
    ['a negative ceiling', (valid) => valid.replace(/"ceilingTicks":(\d+)/, '"ceilingTicks":-5')],
    ['a fractional ceiling', (valid) => valid.replace(/"ceilingTicks":(\d+)/, '"ceilingTicks":$1.5')],
    ['no layout', (valid) => valid.replace(/"layout":"[^"]*",/, '')],
  ])('%s is a corrupt file, named in the error, and stays as it was', async (_name, damage) => {
    const file = freshFile();
    const valid = readFileSync(await written(), 'utf8');
    const text = damage(valid);
    expect(text).not.toBe(valid);
    writeFileSync(file, text);
    const error = await failureOf(boot({ workerId: 3, ceilingFile: file }));
    expect(error).toBeInstanceOf(CeilingFileError);
    expect(error).toMatchObject({ file, problem: 'corrupt' });
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/Restore it from a backup/);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it.each<[string, Omit<SnowflakeModuleOptions, 'ceilingFile'>]>([
    ['another worker ID', { workerId: 4 }],
    ['another datacenter', { workerId: 3, datacenterId: 2, layout: 'twitter' }],
    ['another epoch', { workerId: 3, layout: { epoch: Date.UTC(2025, 0, 1) } }],
    ['another time unit', { workerId: 3, layout: { timeUnitMs: 10 } }],
    ['other field widths', { workerId: 3, layout: { workerBits: 9, sequenceBits: 13 } }],
    ['a layout with a shard field', { workerId: 3, layout: { sequenceBits: 8, shardBits: 4 } }],
  ])('a file of %s is foreign, named in the error, and stays as it was', async (_name, owner) => {
    const file = await written(owner);
    const bytes = readFileSync(file, 'utf8');
    const runner =
      owner.datacenterId === undefined ? { workerId: 3 } : { workerId: 3, datacenterId: 1, layout: 'twitter' as const };
    const error = await failureOf(boot({ ...runner, ceilingFile: file }));
    expect(error).toMatchObject({ name: 'CeilingFileError', file, problem: 'foreign' });
    expect((error as Error).message).toMatch(/a file of its own/);
    expect(readFileSync(file, 'utf8')).toBe(bytes);
  });

  it('a directory where the file should be is an error, never a missing file', async () => {
    const file = temp.path('a-directory.json');
    mkdirSync(file);
    const error = await failureOf(boot({ workerId: 3, ceilingFile: file }));
    expect(error).toMatchObject({ name: 'CeilingFileError', file });
  });
});

describe('ceilingFile: issuing', () => {
  it('raises the ceiling off the event loop while the event loop is free', async () => {
    const file = freshFile();
    const { app, ids, source } = await boot({
      workerId: 1,
      ceilingFile: { path: file, stepMs: 1000, ifMissing: 'create' },
    });
    const first = ceilingOf(file);
    for (let i = 0; i < 30; i++) {
      ids.next();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // About one raise per half step in 3 s, each by the timer, none on the calling thread.
    expect(source.raises.background).toBeGreaterThanOrEqual(3);
    expect(source.raises.blocking).toBe(0);
    expect(ceilingOf(file)).toBeGreaterThan(first + 2000);
    expect(tickOf(ids, ids.next())).toBeLessThanOrEqual(ceilingOf(file));
    await app.close();
  });

  it('a synchronous raise while a background write is under way wins: the older ceiling is never renamed over it', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids, source } = await boot({
      workerId: 1,
      ceilingFile: { path: file, stepMs: 1000, ifMissing: 'create' },
      clock,
    });
    // The source's writer (ceiling-file.writer.ts), reached past `private` to start the timer's write by hand.
    const internals = (
      source as unknown as { writer: { raiseInBackground(): void; background: Promise<void> | undefined } }
    ).writer;
    // The timer's write starts at +500 ms; before it lands, the clock jumps past the ceiling and next() writes.
    clock.advance(500);
    internals.raiseInBackground();
    const background = internals.background!;
    clock.advance(1000);
    const id = ids.next();
    const written = ceilingOf(file);
    expect(written).toBe(ticksAtMs(ids.layout, clock.now() + 1000));
    await background;
    expect(ceilingOf(file)).toBe(written);
    expect(source.raises).toEqual({ background: 0, blocking: 1 });
    expect(tickOf(ids, id)).toBeLessThanOrEqual(written);
    expect(readdirSync(temp.dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    await app.close();
  });

  it('a synchronous loop that never lets the event loop turn issues only up to the ceiling on disk, and is never refused', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids, source } = await boot({
      workerId: 1,
      ceilingFile: { path: file, stepMs: 1000, ifMissing: 'create' },
      clock,
    });
    const before = ceilingOf(file);
    let last = -1n;
    // 5 s of clock, 50 IDs every 10 ms, without an await: no timer can run.
    for (let step = 0; step < 500; step++) {
      clock.advance(10);
      for (let i = 0; i < 50; i++) {
        const id = ids.next();
        expect(id).toBeGreaterThan(last);
        last = id;
      }
      expect(tickOf(ids, last)).toBeLessThanOrEqual(ceilingOf(file));
    }
    expect(ceilingOf(file)).toBeGreaterThan(before + 4000);
    expect(source.raises.blocking).toBeGreaterThanOrEqual(4);
    await app.close();
    expect(ceilingOf(file)).toBe(tickOf(ids, last));
  });
});

describe('ceilingFile: the start', () => {
  it('a stop during the wait for the clock never lowers the recorded ceiling, and no ID is issued after it', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 6, ceilingFile: { path: file, ifMissing: 'create' }, clock });
    first.ids.nextBatch(100);
    await first.app.close();
    const recorded = ceilingOf(file);
    clock.step(-2000);
    const ids = new IdService({ workerId: 6, ceilingFile: file, clock });
    const starting = failureOf(ids.onModuleInit());
    await new Promise((resolve) => setTimeout(resolve, 200));
    await ids.onApplicationShutdown();
    await starting;
    expect(ceilingOf(file)).toBeGreaterThanOrEqual(recorded);
    expect(() => ids.next()).toThrow(expect.objectContaining({ name: 'WorkerUnavailableError', reason: 'stopped' }));
  });

  it('nextAsync() called during the start waits for it, and issues above the previous run', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 7, ceilingFile: { path: file, ifMissing: 'create' }, clock });
    const before = first.ids.next();
    await first.app.close();
    clock.step(-300);
    const ids = new IdService({ workerId: 7, ceilingFile: file, clock });
    const starting = ids.onModuleInit();
    const early = ids.nextAsync();
    await starting;
    expect(await early).toBeGreaterThan(before);
    await ids.onApplicationShutdown();
  });
});
