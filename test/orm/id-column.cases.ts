/**
 * The precision cases that the ID columns of Drizzle and MikroORM must pass on every real database: IDs filled on
 * insert in bigint and string modes, 2^63 − 1 and the js-safe boundary read back exactly, found again by equality,
 * a bulk insert, and a clear error when the driver is set up to round.
 */
import { IdService } from '../../lib/index.js';
import type { SnowflakeIdSource } from '../../lib/drizzle.js';
import { IdPrecisionLossError } from '../../lib/typeorm.js';

/** A row of the test table: `id` in bigint mode (primary key), `ref` in string mode (unique). */
export interface ItemRow {
  id: bigint;
  ref: string;
  title: string;
}

/** One dialect's table, opened on a real database. */
export interface ItemTable {
  /** Inserts rows that give no IDs: the columns fill them. */
  insertTitles(titles: string[]): Promise<void>;
  insertRows(rows: ItemRow[]): Promise<void>;
  all(): Promise<ItemRow[]>;
  byId(id: bigint): Promise<ItemRow[]>;
  byRef(ref: string): Promise<ItemRow[]>;
  close(): Promise<void>;
}

export interface DrizzleHarness {
  /** The table on a driver set up to return 64-bit integers exactly. */
  open(ids: SnowflakeIdSource): Promise<ItemTable>;
  /** The same table on a driver left to return them as JS numbers. */
  openRounding(ids: SnowflakeIdSource): Promise<ItemTable>;
  /** What the IdPrecisionLossError of a rounding read must name. */
  fix: RegExp;
}

const MAX_INT64 = 2n ** 63n - 1n;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Hands out the given IDs in order, and records each. */
function listedIds(values: bigint[]): SnowflakeIdSource & { issued: bigint[] } {
  const issued: bigint[] = [];
  return {
    issued,
    next: () => {
      const id = values[issued.length];
      if (id === undefined) throw new Error('listedIds: out of IDs');
      issued.push(id);
      return id;
    },
  };
}

const byTitle = (rows: ItemRow[]) => [...rows].sort((a, b) => a.title.localeCompare(b.title));

export function idColumnCases(harness: DrizzleHarness): void {
  it('fills both columns on insert and reads 2^63 - 1 and the js-safe boundary back exactly, in their modes', async () => {
    const ids = listedIds([MAX_INT64, SAFE + 2n, SAFE, SAFE + 1n, SAFE + 3n, MAX_INT64 - 1n]);
    const table = await harness.open(ids);
    try {
      await table.insertTitles(['a', 'b', 'c']);
      const rows = byTitle(await table.all());
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        expect(typeof row.id).toBe('bigint');
        expect(typeof row.ref).toBe('string');
      }
      const readBack = rows.flatMap((row) => [row.id, BigInt(row.ref)]).sort((a, b) => (a < b ? -1 : 1));
      expect(readBack).toEqual([...ids.issued].sort((a, b) => (a < b ? -1 : 1)));
      expect(ids.issued).toHaveLength(6);
      for (const row of rows) {
        expect(await table.byId(row.id)).toEqual([row]);
        expect(await table.byRef(row.ref)).toEqual([row]);
      }
      // Equality must be exact: a database that compares through doubles would match neighbouring IDs as well.
      for (const value of ids.issued.flatMap((id) => [id - 1n, id, id + 1n]).filter((value) => value <= MAX_INT64)) {
        expect((await table.byId(value)).map((row) => row.id)).toEqual(
          rows.filter((row) => row.id === value).map((row) => row.id),
        );
        const text = value.toString();
        expect((await table.byRef(text)).map((row) => row.ref)).toEqual(
          rows.filter((row) => row.ref === text).map((row) => row.ref),
        );
      }
    } finally {
      await table.close();
    }
  });

  it('keeps the IDs a caller gives, and asks the source for none', async () => {
    const ids = listedIds([]);
    const table = await harness.open(ids);
    try {
      const given: ItemRow = { id: MAX_INT64, ref: (SAFE + 1n).toString(), title: 'given' };
      await table.insertRows([given]);
      expect(await table.byId(MAX_INT64)).toEqual([given]);
      expect(ids.issued).toEqual([]);
    } finally {
      await table.close();
    }
  });

  it('gives each row of a bulk insert its own ID, each read back as issued', async () => {
    const service = new IdService({ workerId: 5, workerLock: false });
    await service.onModuleInit();
    const issued: bigint[] = [];
    const recording: SnowflakeIdSource = {
      next: () => {
        const id = service.next();
        issued.push(id);
        return id;
      },
    };
    const table = await harness.open(recording);
    try {
      const titles = Array.from({ length: 1000 }, (_, index) => `t${String(index).padStart(4, '0')}`);
      await table.insertTitles(titles);
      const rows = await table.all();
      expect(rows).toHaveLength(1000);
      const readBack = new Set(rows.flatMap((row) => [row.id, BigInt(row.ref)]));
      expect(readBack.size).toBe(2000);
      expect(issued).toHaveLength(2000);
      expect(issued.every((id) => readBack.has(id))).toBe(true);
    } finally {
      await table.close();
      await service.onApplicationShutdown();
    }
  });

  it('refuses a read the driver has rounded, naming the setting that fixes it', async () => {
    const table = await harness.openRounding(listedIds([MAX_INT64, SAFE + 2n]));
    try {
      await table.insertTitles(['rounded']);
      const reading = table.all();
      await expect(reading).rejects.toThrow(IdPrecisionLossError);
      await expect(reading).rejects.toThrow(harness.fix);
    } finally {
      await table.close();
    }
  });
}
