/**
 * A fixed worker ID with a ceiling file (option `ceilingFile`), in one process on injected clocks: the ceiling is on
 * disk before the IDs under it, raised in steps and not per ID, written exactly on a graceful stop, and a restart
 * starts above it (waiting when the clock stands a little behind, refusing with the file's name when it stands far
 * behind). Files that are damaged or belong to another worker are errors, never a missing ceiling. Crashes (kill -9)
 * are in ceiling-file.e2e-spec.ts.
 */
import 'reflect-metadata';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SnowflakeConfigError, WorkerUnavailableError } from '../../lib/core/errors.js';
import { ticksAtMs } from '../../lib/core/time-units.js';
import { IdService } from '../../lib/module/id.service.js';
import { SnowflakeModule } from '../../lib/module/snowflake.module.js';
import type { SnowflakeModuleOptions } from '../../lib/module/snowflake.options.js';
import { SNOWFLAKE_WORKER_SOURCE } from '../../lib/module/snowflake.tokens.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { parseCeilingRecord, type CeilingRecord } from '../../lib/worker/ceiling-file.js';
import {
  CeilingAheadOfClockError,
  CeilingFileAccessError,
  CeilingFileCorruptError,
  CeilingFileForeignError,
} from '../../lib/worker/ceiling-file.errors.js';
import { FileCeilingWorkerSource } from '../../lib/worker/file-ceiling.source.js';
import { tempDirectory } from '../support/temp-dir.js';

const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

const temp = tempDirectory('snowflake-ceiling-');
afterAll(() => temp.remove());

let counter = 0;
/** A fresh file path for each test. */
const freshFile = () => temp.path(`worker-${++counter}.json`);
const readRecord = (file: string): CeilingRecord => parseCeilingRecord(file, readFileSync(file, 'utf8'));

async function boot(options: SnowflakeModuleOptions) {
  const moduleRef = await Test.createTestingModule({ imports: [SnowflakeModule.forRoot(options)] })
    .setLogger(quiet)
    .compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  const source = app.get<FileCeilingWorkerSource>(SNOWFLAKE_WORKER_SOURCE);
  return { app, ids: app.get(IdService), source };
}

const tickOf = (ids: IdService, id: bigint) => ticksAtMs(ids.layout, ids.decode(id).timestamp);

describe('ceilingFile: writing ahead of use', () => {
  it('creates the file at start, for its worker, datacenter and layout, with a ceiling aheadMs beyond the clock', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids } = await boot({ workerId: 3, datacenterId: 1, layout: 'twitter', ceilingFile: file, clock });
    const record = readRecord(file);
    expect(record).toMatchObject({ workerId: 3, datacenterId: 1, state: 'running' });
    expect(record.layout).toEqual({
      epoch: 1288834974657,
      timeUnitMs: 1,
      timestampBits: 41,
      datacenterBits: 5,
      workerBits: 5,
      sequenceBits: 12,
    });
    expect(record.ceiling).toBe(ticksAtMs(ids.layout, clock.now() + 5000));
    expect(record.ceilingAt).toBe(new Date(clock.now() + 5000).toISOString());
    const id = ids.next();
    expect(ids.decode(id).workerId).toBe(3);
    expect(tickOf(ids, id)).toBeLessThanOrEqual(record.ceiling);
    expect(existsSync(`${file}.tmp`)).toBe(false);
    await app.close();
  });

  it('never issues above the ceiling on disk, and raises it in steps, not per ID', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids, source } = await boot({ workerId: 1, ceilingFile: { path: file, aheadMs: 1000 }, clock });
    let issued = 0;
    let last = -1n;
    // 6 s of clock in steps of 10 ms, 200 IDs a step; the event loop runs between steps, as between requests.
    for (let step = 0; step < 600; step++) {
      clock.advance(10);
      const batch = await ids.nextBatchAsync(200);
      expect(batch[0]).toBeGreaterThan(last);
      last = batch.at(-1)!;
      issued += batch.length;
      expect(tickOf(ids, last)).toBeLessThanOrEqual(readRecord(file).ceiling);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    // One raise per half of aheadMs of clock: about 12 for 120,000 IDs.
    expect(issued).toBe(120_000);
    expect(source.raises.total).toBeGreaterThanOrEqual(10);
    expect(source.raises.total).toBeLessThanOrEqual(14);
    await app.close();
  });

  it('raises on the calling thread, instead of failing, when a synchronous loop never lets the event loop turn', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids, source } = await boot({ workerId: 1, ceilingFile: { path: file, aheadMs: 1000 }, clock });
    let last = -1n;
    // 5 s of clock without an await: a raise off the event loop could never land.
    for (let step = 0; step < 500; step++) {
      clock.advance(10);
      for (let i = 0; i < 50; i++) {
        const id = ids.next();
        expect(id).toBeGreaterThan(last);
        last = id;
      }
      expect(tickOf(ids, last)).toBeLessThanOrEqual(readRecord(file).ceiling);
    }
    // The raise set off when it fell due never landed: each time the clock passed the ceiling, the next ID wrote it
    // on the spot, aheadMs beyond the clock (at about 1, 2, 3 and 4 s).
    expect(source.raises.blocking).toBeGreaterThanOrEqual(4);
    expect(source.raises.blocking).toBeLessThanOrEqual(5);
    expect(source.raises.total).toBe(source.raises.blocking);
    await app.close();
    expect(readRecord(file)).toMatchObject({ state: 'stopped', ceiling: tickOf(ids, last) });
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });

  it('raises at once, on the calling thread, when the clock jumps past the ceiling', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids, source } = await boot({ workerId: 1, ceilingFile: { path: file, aheadMs: 1000 }, clock });
    ids.next();
    // A clock step forward past the ceiling: the next ID needs a ceiling that is not on disk yet.
    clock.advance(1500);
    const id = ids.next();
    expect(tickOf(ids, id)).toBe(ticksAtMs(ids.layout, clock.now()));
    expect(readRecord(file).ceiling).toBe(ticksAtMs(ids.layout, clock.now() + 1000));
    expect(source.raises).toEqual({ total: 1, blocking: 1 });
    await app.close();
  });

  it('goes on up to the written ceiling when a raise fails, says why, and raises again once the file can be written', async () => {
    const dir = temp.path('vanishing');
    mkdirSync(dir);
    const file = `${dir}/worker.json`;
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids } = await boot({ workerId: 1, ceilingFile: { path: file, aheadMs: 1000 }, clock });
    const ceiling = readRecord(file).ceiling;
    rmSync(dir, { recursive: true });
    clock.advance(600);
    ids.next(); // sets off a raise, which fails
    clock.advance(300);
    expect(tickOf(ids, ids.next())).toBeLessThanOrEqual(ceiling);
    clock.advance(200);
    expect(() => ids.next()).toThrow(WorkerUnavailableError);
    await expect(ids.nextAsync()).rejects.toThrow(CeilingFileAccessError);
    await expect(ids.nextAsync()).rejects.toThrow(/Could not write the ceiling file .*Create its directory/);
    mkdirSync(dir);
    clock.advance(1000); // past the retry delay
    const id = await ids.nextAsync();
    expect(tickOf(ids, id)).toBeLessThanOrEqual(readRecord(file).ceiling);
    expect(tickOf(ids, id)).toBeGreaterThan(ceiling);
    await app.close();
  });
});

describe('ceilingFile: restarts', () => {
  it('writes the exact last timestamp on a graceful stop', async () => {
    const file = freshFile();
    const clock = new ManualClock({ fixedAt: Date.UTC(2026, 5, 1) });
    const { app, ids } = await boot({ workerId: 2, ceilingFile: file, clock });
    clock.advance(7);
    const last = ids.nextBatch(10).at(-1)!;
    await app.close();
    expect(readRecord(file)).toMatchObject({ state: 'stopped', ceiling: tickOf(ids, last) });
  });

  it('starts above the previous run after a graceful stop, waiting for a clock set back a little', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 2, ceilingFile: file, clock });
    const before = first.ids.nextBatch(1000);
    await first.app.close();
    clock.step(-400);
    const started = performance.now();
    const second = await boot({ workerId: 2, ceilingFile: file, clock });
    const waited = performance.now() - started;
    const after = second.ids.nextBatch(1000);
    expect(after[0]).toBeGreaterThan(before.at(-1)!);
    expect(waited).toBeGreaterThanOrEqual(350);
    expect(new Set([...before, ...after]).size).toBe(2000);
    await second.app.close();
  });

  it('starts above the ceiling of a run that did not stop, waiting up to maxWaitMs', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 2, ceilingFile: { path: file, aheadMs: 500 }, clock });
    const before = first.ids.nextBatch(100);
    const { ceiling } = readRecord(file);
    // The run ends without a stop (as a kill would end it): its file keeps the ceiling written ahead.
    await first.app.close();
    writeFileSync(file, JSON.stringify({ ...readRecord(file), ceiling, state: 'running' }));
    const second = await boot({ workerId: 2, ceilingFile: { path: file, aheadMs: 500 }, clock });
    const after = second.ids.next();
    expect(after).toBeGreaterThan(before.at(-1)!);
    expect(tickOf(second.ids, after)).toBeGreaterThan(ceiling);
    await second.app.close();
  });

  it('refuses to start on a clock set back beyond maxWaitMs, naming the file and the fix, and leaves the file alone', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 2, ceilingFile: { path: file, maxWaitMs: 500 }, clock });
    first.ids.next();
    await first.app.close();
    const bytes = readFileSync(file, 'utf8');
    clock.step(-3000);
    const failure = await boot({ workerId: 2, ceilingFile: { path: file, maxWaitMs: 500 }, clock }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(CeilingAheadOfClockError);
    const error = failure as CeilingAheadOfClockError;
    expect(error.file).toBe(file);
    expect(error.maxWaitMs).toBe(500);
    expect(error.behindMs).toBeGreaterThan(2500);
    expect(error.behindMs).toBeLessThanOrEqual(3001);
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/Check the host clock .*`ceilingFile.maxWaitMs`.*another worker ID.*Do not delete/);
    expect(readFileSync(file, 'utf8')).toBe(bytes);
  });

  it('leaves the file alone when stopped while its start waits for the clock', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 6, ceilingFile: file, clock });
    first.ids.next();
    await first.app.close();
    const bytes = readFileSync(file, 'utf8');
    clock.step(-2000);
    const ids = new IdService({ workerId: 6, ceilingFile: file, clock });
    const starting = ids.onModuleInit().catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await ids.onApplicationShutdown();
    expect(await starting).toMatchObject({ name: 'WorkerUnavailableError', reason: 'stopped' });
    expect(readFileSync(file, 'utf8')).toBe(bytes);
  });

  it('lets nextAsync() called during the start wait for it, and issue above the previous run', async () => {
    const file = freshFile();
    const clock = new ManualClock();
    const first = await boot({ workerId: 7, ceilingFile: file, clock });
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

  it('keeps host-name worker IDs too', async () => {
    const file = freshFile();
    const { app, ids } = await boot({ workerId: 'hostname', hostname: 'api-5', ceilingFile: file });
    expect(ids.decode(ids.next()).workerId).toBe(5);
    expect(ids.status()).toMatchObject({ source: 'hostname', ready: true, workerId: 5 });
    await app.close();
    expect(readRecord(file)).toMatchObject({ workerId: 5, state: 'stopped' });
  });
});

describe('ceilingFile: files that are not this worker’s ceiling', () => {
  async function writtenBy(options: Omit<SnowflakeModuleOptions, 'ceilingFile'>): Promise<string> {
    const file = freshFile();
    const { app, ids } = await boot({ ...options, ceilingFile: file });
    ids.next();
    await app.close();
    return file;
  }

  const validText = async () => readFileSync(await writtenBy({ workerId: 3 }), 'utf8');

  it.each<[string, (valid: string) => string, RegExp]>([
    ['an empty file', () => '', /it is empty/],
    ['text that is not JSON', () => 'ceiling=12\n', /not JSON/],
    ['a cut-off record', (valid) => valid.slice(0, valid.length / 2), /not JSON/],
    ['a JSON array', () => '[]', /not a JSON object/],
    ['another format', (valid) => valid.replace('nestjs-snowflake/ceiling-file', 'other'), /"format" is "other"/],
    ['a newer version', (valid) => valid.replace('"version": 1', '"version": 2'), /version 2/],
    ['a ceiling that is not a number', (valid) => valid.replace(/"ceiling": (\d+)/, '"ceiling": "$1"'), /"ceiling"/],
    ['a layout field missing', (valid) => valid.replace(/"workerBits": \d+,/, ''), /"layout.workerBits" is undefined/],
    ['an unknown state', (valid) => valid.replace('"stopped"', '"paused"'), /"state" is "paused"/],
  ])('%s is a CeilingFileCorruptError naming the file, and stays as it was', async (_name, damage, problem) => {
    const file = freshFile();
    const text = damage(await validText());
    writeFileSync(file, text);
    const failure = await boot({ workerId: 3, ceilingFile: file }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CeilingFileCorruptError);
    expect((failure as CeilingFileCorruptError).file).toBe(file);
    expect((failure as Error).message).toContain(file);
    expect((failure as CeilingFileCorruptError).problem).toMatch(problem);
    expect((failure as Error).message).toMatch(/Do not delete it.*Restore it from a backup/);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it.each<[string, Omit<SnowflakeModuleOptions, 'ceilingFile'>, Omit<SnowflakeModuleOptions, 'ceilingFile'>, RegExp]>([
    ['another worker ID', { workerId: 4 }, { workerId: 3 }, /belongs to worker 4 of datacenter 0.*runs worker 3/],
    [
      'another datacenter',
      { workerId: 3, datacenterId: 2, layout: 'twitter' },
      { workerId: 3, datacenterId: 1, layout: 'twitter' },
      /belongs to worker 3 of datacenter 2.*runs worker 3 of datacenter 1/,
    ],
    ['another layout', { workerId: 3, layout: 'twitter' }, { workerId: 3 }, /epoch 1288834974657.*epoch 1767225600000/],
    ['another time unit', { workerId: 3, layout: { timeUnitMs: 10 } }, { workerId: 3 }, /timeUnitMs 10.*timeUnitMs 1,/],
  ])('a file of %s is a CeilingFileForeignError', async (_name, owner, runner, message) => {
    const file = await writtenBy(owner);
    const bytes = readFileSync(file, 'utf8');
    const failure = await boot({ ...runner, ceilingFile: file }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CeilingFileForeignError);
    expect((failure as CeilingFileForeignError).found.workerId).toBe(owner.workerId);
    expect((failure as Error).message).toContain(file);
    expect((failure as Error).message).toMatch(message);
    expect((failure as Error).message).toMatch(/Give every worker ID a file of its own/);
    expect(readFileSync(file, 'utf8')).toBe(bytes);
  });

  it('a file in a directory that does not exist fails the bootstrap, saying to create it', async () => {
    const file = temp.path('missing/worker.json');
    const failure = await boot({ workerId: 3, ceilingFile: file }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CeilingFileAccessError);
    expect(failure).toMatchObject({ file, operation: 'write', code: 'ENOENT' });
    expect((failure as Error).message).toMatch(/Could not write the ceiling file .*Create its directory/);
  });

  it('a directory in place of the file is an error, not a missing file', async () => {
    const file = temp.path('a-directory.json');
    mkdirSync(file);
    const failure = await boot({ workerId: 3, ceilingFile: file }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ file, operation: 'read', code: 'EISDIR' });
  });
});

describe('option ceilingFile', () => {
  const invalid = (options: SnowflakeModuleOptions) => {
    try {
      new IdService(options);
    } catch (error) {
      return error as SnowflakeConfigError;
    }
    throw new Error('expected the options to be refused');
  };

  it('goes with workerId only', () => {
    expect(invalid({ redis: { url: 'redis://127.0.0.1:1' }, ceilingFile: '/tmp/x.json' })).toMatchObject({
      option: 'ceilingFile',
      message: expect.stringMatching(/keeps each worker ID's ceiling in Redis/),
    });
    expect(invalid({ ceilingFile: '/tmp/x.json' })).toMatchObject({
      option: 'ceilingFile',
      message: expect.stringMatching(/give `workerId`/),
    });
  });

  it('names unknown keys, empty paths and bounds that cannot work', () => {
    expect(invalid({ workerId: 1, ceilingFile: { path: '/tmp/x.json', ahead: 10 } as never })).toMatchObject({
      option: 'ceilingFile.ahead',
      message: expect.stringMatching(/did you mean `aheadMs`/),
    });
    expect(invalid({ workerId: 1, ceilingFile: '' })).toMatchObject({ option: 'ceilingFile' });
    expect(invalid({ workerId: 1, ceilingFile: { path: ' ' } })).toMatchObject({ option: 'ceilingFile.path' });
    expect(invalid({ workerId: 1, ceilingFile: { path: '/tmp/x.json', aheadMs: 0 } })).toMatchObject({
      option: 'ceilingFile.aheadMs',
    });
    expect(
      invalid({ workerId: 1, layout: 'js-safe', ceilingFile: { path: '/tmp/x.json', aheadMs: 15 } }),
    ).toMatchObject({ option: 'ceilingFile.aheadMs', message: expect.stringMatching(/use 20 or more/) });
    expect(invalid({ workerId: 1, ceilingFile: { path: '/tmp/x.json', maxWaitMs: Number.NaN } })).toMatchObject({
      option: 'ceilingFile.maxWaitMs',
    });
  });

  it('resolves a relative path against the working directory', async () => {
    const { app, source } = await boot({
      workerId: 9,
      ceilingFile: temp.path('relative.json').replace(`${process.cwd()}/`, ''),
    });
    expect(source.file).toBe(temp.path('relative.json'));
    await app.close();
  });
});
