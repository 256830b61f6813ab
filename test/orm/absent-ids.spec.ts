import { WorkerUnavailableError, WorkerWaitTimeoutError } from '../../lib/index.js';
import { fillAbsentIds, fillEachRow } from '../../lib/orm/absent-ids.js';
import type { SnowflakeIdSource } from '../../lib/orm/id-issuer.js';

type Row = Record<string, unknown>;
const isAbsent = (row: Row, name: string) => row[name] === undefined;
const write = (row: Row, name: string, id: bigint) => void (row[name] = id);

/**
 * A source that counts up from 100 and refuses now (`WorkerUnavailableError`) while `down`; its `nextAsync()` waits
 * until `up()` is called, as IdService's waits for a re-claimed worker ID.
 */
function outageSource() {
  let next = 100n;
  let down = false;
  let release: () => void = () => undefined;
  let back = Promise.resolve();
  const source = {
    nextCalls: 0,
    asyncCalls: 0,
    next(): bigint {
      source.nextCalls++;
      if (down) throw new WorkerUnavailableError('switching');
      return next++;
    },
    async nextAsync(): Promise<bigint> {
      source.asyncCalls++;
      await back;
      return next++;
    },
    down() {
      down = true;
      back = new Promise((resolve) => (release = resolve));
    },
    up() {
      down = false;
      release();
    },
  };
  return source;
}

describe('fillAbsentIds()', () => {
  it('fills absent slots at once, keeps the values given, and returns no promise while IDs come now', () => {
    const source = outageSource();
    const row: Row = { id: undefined, ref: 7n, other: undefined };
    expect(fillAbsentIds(source, row, ['id', 'ref', 'other'], isAbsent, write)).toBeUndefined();
    expect(row).toEqual({ id: 100n, ref: 7n, other: 101n });
    expect(source.asyncCalls).toBe(0);
  });

  it('waits through nextAsync() from the first ID that cannot be issued now, and fills the rest after it', async () => {
    const source = outageSource();
    source.down();
    const row: Row = {};
    const pending = fillAbsentIds(source, row, ['id', 'ref'], isAbsent, write);
    expect(pending).toBeInstanceOf(Promise);
    expect(row).toEqual({});
    source.up();
    await pending;
    expect(row).toEqual({ id: 100n, ref: 101n });
  });

  it('rejects with what the bounded wait rejects with, and leaves the row without IDs', async () => {
    const timeout = new WorkerWaitTimeoutError({
      waitedMs: 500,
      limitMs: 500,
      limitFrom: 'maxAsyncWaitMs',
      state: 'switching',
      lastError: null,
      detail: 'test',
    });
    const source: SnowflakeIdSource = {
      next: () => {
        throw new WorkerUnavailableError('switching');
      },
      nextAsync: () => Promise.reject(timeout),
    };
    const row: Row = {};
    await expect(fillAbsentIds(source, row, ['id'], isAbsent, write)).rejects.toBe(timeout);
    expect(row).toEqual({});
  });

  it('throws at once what next() threw when the source has no nextAsync()', () => {
    const source: SnowflakeIdSource = {
      next: () => {
        throw new WorkerUnavailableError('switching');
      },
    };
    expect(() => fillAbsentIds(source, {}, ['id'], isAbsent, write)).toThrow(WorkerUnavailableError);
  });
});

describe('fillEachRow()', () => {
  it('fills rows in order, synchronously until one has to wait, and the rest after it', async () => {
    const source = outageSource();
    const rows: Row[] = [{}, {}, {}, {}];
    const fill = (row: Row) => fillAbsentIds(source, row, ['id'], isAbsent, write);
    expect(fillEachRow(rows.slice(0, 2), fill)).toBeUndefined();
    source.down();
    const pending = fillEachRow(rows.slice(2), fill);
    expect(pending).toBeInstanceOf(Promise);
    source.up();
    await pending;
    expect(rows.map((row) => row.id)).toEqual([100n, 101n, 102n, 103n]);
  });
});
