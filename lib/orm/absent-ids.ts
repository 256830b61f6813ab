import { issueOrWait, type SnowflakeIdSource } from './id-issuer.js';

/**
 * Fills the absent ID properties of `row`, one per slot, for the ORM hooks that may return a promise (MikroORM's
 * `beforeCreate`, Sequelize's hooks). IDs are issued synchronously while `ids` can issue them now; from the first
 * that cannot (a lease being re-claimed during a Redis outage, a used-up sequence), the rest are filled after the
 * source's bounded `nextAsync()` and a promise is returned, which the ORM awaits before it inserts. The wait ends
 * within the module's `maxAsyncWaitMs` with `WorkerWaitTimeoutError`, as TypeORM and Prisma inserts do.
 *
 * @param isAbsent whether the row has no value in the slot yet (a value the caller set is kept)
 * @param write puts the issued ID into the slot, converted to the slot's JS type
 * @returns undefined when every ID was issued at once; otherwise a promise of the rest
 * @internal
 */
export function fillAbsentIds<R, S>(
  ids: SnowflakeIdSource,
  row: R,
  slots: readonly S[],
  isAbsent: (row: R, slot: S) => boolean,
  write: (row: R, slot: S, id: bigint) => void,
): void | Promise<void> {
  for (let index = 0; index < slots.length; index++) {
    if (!isAbsent(row, slots[index])) continue;
    const id = issueOrWait(ids);
    if (typeof id !== 'bigint') return fillAfterWait(ids, row, slots, index, id, isAbsent, write);
    write(row, slots[index], id);
  }
  return undefined;
}

/** The rest of {@link fillAbsentIds}, from the slot whose ID is `pending`. */
async function fillAfterWait<R, S>(
  ids: SnowflakeIdSource,
  row: R,
  slots: readonly S[],
  from: number,
  pending: Promise<bigint>,
  isAbsent: (row: R, slot: S) => boolean,
  write: (row: R, slot: S, id: bigint) => void,
): Promise<void> {
  write(row, slots[from], await pending);
  for (let index = from + 1; index < slots.length; index++) {
    if (isAbsent(row, slots[index])) write(row, slots[index], await issueOrWait(ids));
  }
}

/**
 * Fills the rows of a bulk insert one after the other with `fill`, synchronously while it returns nothing, and
 * from the first row that has to wait on, awaiting each: the IDs stay in the order of the rows.
 *
 * @internal
 */
export function fillEachRow<R>(rows: readonly R[], fill: (row: R) => void | Promise<void>): void | Promise<void> {
  for (let index = 0; index < rows.length; index++) {
    const pending = fill(rows[index]);
    if (pending !== undefined) return fillRowsAfterWait(rows, index + 1, pending, fill);
  }
  return undefined;
}

async function fillRowsAfterWait<R>(
  rows: readonly R[],
  from: number,
  pending: Promise<void>,
  fill: (row: R) => void | Promise<void>,
): Promise<void> {
  await pending;
  for (let index = from; index < rows.length; index++) await fill(rows[index]);
}
