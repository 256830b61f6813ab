/**
 * The bounded wait of an ORM's insert hooks during an outage of the worker-ID source, on a real database: an insert
 * waits for the worker ID to come back, up to the module's `maxAsyncWaitMs`, then fails with the typed
 * `WorkerWaitTimeoutError` (a `WorkerUnavailableError`, 503 over HTTP) and writes nothing. The source is a stub that
 * takes its worker ID away and hands it back after a delay, as a lease does across a Redis outage.
 */
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { IdService, SnowflakeModule, WorkerUnavailableError, WorkerWaitTimeoutError } from '../../lib/index.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';
import type { ItemTable } from './id-column.cases.js';
import type { SnowflakeIdSource } from '../../lib/drizzle.js';

const WORKER = 11;
/** The module's bound in the case where the outage outlasts it. */
const SHORT_BOUND_MS = 500;
/** The outage in the case where the worker ID comes back in time, and the bound it stays under. */
const OUTAGE_MS = 400;
const LONG_BOUND_MS = 5_000;
/**
 * How late an answer may come after the bound or the outage's end: the insert itself and timers on a loaded 2-core
 * machine running the other suites beside this one.
 */
const SLACK_MS = 2_000;

interface App {
  context: INestApplicationContext;
  ids: IdService;
  source: StubWorkerSource;
}

async function boot(maxAsyncWaitMs: number): Promise<App> {
  const source = new StubWorkerSource({ kind: 'outage-for-tests', workerId: WORKER });
  const moduleRef = await Test.createTestingModule({
    imports: [SnowflakeModule.forRoot({ workerSource: source, maxAsyncWaitMs })],
  }).compile();
  const context = await moduleRef.init();
  return { context, ids: context.get(IdService), source };
}

/** How long `work` took, ms, and what it threw (undefined when it resolved). */
async function timed(work: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now();
  try {
    await work();
    return { ms: performance.now() - started, error: undefined };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

/**
 * The opening of every case: boots the app with `maxAsyncWaitMs`, opens its table, and takes the worker ID away
 * (for `outageMs`, or until the case ends); both are closed after each case.
 */
function duringOutage(open: (ids: SnowflakeIdSource) => Promise<ItemTable>) {
  let app: App | undefined;
  let table: ItemTable | undefined;

  afterEach(async () => {
    await table?.close();
    await app?.context.close();
    table = app = undefined;
  });

  return async (maxAsyncWaitMs: number, outageMs?: number): Promise<{ app: App; table: ItemTable }> => {
    app = await boot(maxAsyncWaitMs);
    table = await open(app.ids);
    app.source.outage(outageMs);
    return { app, table };
  };
}

export function boundedWaitCases(open: (ids: SnowflakeIdSource) => Promise<ItemTable>): void {
  const start = duringOutage(open);

  it.each([
    ['one row', ['a']],
    ['a bulk insert', ['b0', 'b1', 'b2', 'b3', 'b4', 'b5']],
  ])(
    'waits for a worker ID that comes back within maxAsyncWaitMs, then inserts %s with its IDs',
    async (_label, titles) => {
      const { app, table } = await start(LONG_BOUND_MS, OUTAGE_MS);
      expect(() => app.ids.next()).toThrow(WorkerUnavailableError);

      const { ms, error } = await timed(() => table.insertTitles(titles));

      expect(error).toBeUndefined();
      // It waited for the source (the hooks used to fail at once), and no longer than the outage needed.
      expect(ms).toBeGreaterThanOrEqual(OUTAGE_MS - 50);
      expect(ms).toBeLessThan(OUTAGE_MS + SLACK_MS);
      const rows = await table.all();
      expect(rows.map((row) => row.title)).toEqual([...titles].sort());
      for (const row of rows) {
        for (const id of [row.id, row.ref]) {
          expect(app.ids.decode(id)).toMatchObject({ workerId: WORKER });
        }
      }
      expect(new Set(rows.flatMap((row) => [row.id, BigInt(row.ref)])).size).toBe(rows.length * 2);
    },
  );

  it.each([
    ['one row', ['c']],
    ['a bulk insert', ['d0', 'd1', 'd2', 'd3', 'd4', 'd5']],
  ])(
    'fails %s with WorkerWaitTimeoutError once maxAsyncWaitMs runs out, and writes nothing',
    async (_label, titles) => {
      const { table } = await start(SHORT_BOUND_MS);

      const { ms, error } = await timed(() => table.insertTitles(titles));

      expect(error).toBeInstanceOf(WorkerWaitTimeoutError);
      expect(error).toBeInstanceOf(WorkerUnavailableError);
      expect(error).toMatchObject({ limitMs: SHORT_BOUND_MS, limitFrom: 'maxAsyncWaitMs' });
      expect(ms).toBeGreaterThanOrEqual(SHORT_BOUND_MS - 50);
      expect(ms).toBeLessThan(SHORT_BOUND_MS + SLACK_MS);
      expect(await table.all()).toEqual([]);
    },
  );
}

/**
 * The same outage under a column whose hook is synchronous (Drizzle's `$defaultFn`): the insert fails at once with
 * `WorkerUnavailableError`, and an ID the app takes with `nextAsync()` before the insert waits as the async hooks do.
 */
export function synchronousHookOutageCases(open: (ids: SnowflakeIdSource) => Promise<ItemTable>): void {
  const start = duringOutage(open);

  it('fails an insert that leaves the IDs to the column at once, with WorkerUnavailableError', async () => {
    const { table } = await start(LONG_BOUND_MS);

    const { ms, error } = await timed(() => table.insertTitles(['e']));

    expect(error).toBeInstanceOf(WorkerUnavailableError);
    expect(error).not.toBeInstanceOf(WorkerWaitTimeoutError);
    expect(ms).toBeLessThan(SLACK_MS);
    expect(await table.all()).toEqual([]);
  });

  it('inserts IDs taken with nextAsync() before the insert, after waiting for the worker ID', async () => {
    const { app, table } = await start(LONG_BOUND_MS, OUTAGE_MS);
    const ids = app.ids;

    const { ms, error } = await timed(async () =>
      table.insertRows([{ id: await ids.nextAsync(), ref: String(await ids.nextAsync()), title: 'f' }]),
    );

    expect(error).toBeUndefined();
    expect(ms).toBeGreaterThanOrEqual(OUTAGE_MS - 50);
    expect(ms).toBeLessThan(OUTAGE_MS + SLACK_MS);
    const [row] = await table.all();
    expect(ids.decode(row.id)).toMatchObject({ workerId: WORKER });
    expect(ids.decode(row.ref)).toMatchObject({ workerId: WORKER });
  });
}
