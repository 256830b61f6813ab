/**
 * The part of node-sqlite3's API that Sequelize 6's sqlite dialect calls (connection-manager.js and query.js of
 * sequelize 6.37), over a better-sqlite3 connection that reads 64-bit integers exactly. Nothing more: no `each`,
 * `exec`, `prepare`, `configure` or `verbose`, which Sequelize does not call.
 */
import { EventEmitter } from 'node:events';
import { bindParameters, readInteger, readRow } from './exact-sqlite.values.js';

/** A better-sqlite3 statement, by shape: better-sqlite3 stays an optional peer, out of the published types. */
interface NativeStatement {
  readonly reader: boolean;
  run(...parameters: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  all(...parameters: unknown[]): unknown[];
  get(...parameters: unknown[]): unknown;
}

/** A better-sqlite3 connection, by shape. */
interface NativeDatabase {
  prepare(sql: string): NativeStatement;
  defaultSafeIntegers(toggleState?: boolean): unknown;
  close(): unknown;
}

/** better-sqlite3's `Database` class, by shape. @internal */
export type NativeDatabaseClass = new (
  filename: string,
  options: { readonly?: boolean; fileMustExist?: boolean; timeout?: number },
) => NativeDatabase;

/** SQLite's open flags, with node-sqlite3's names and values. */
const OPEN_READONLY = 0x1;
const OPEN_READWRITE = 0x2;
const OPEN_CREATE = 0x4;
/** Asked for by node-sqlite3's default mode; one better-sqlite3 connection is only used by one thread anyway. */
const OPEN_FULLMUTEX = 0x10000;
const SUPPORTED_FLAGS = OPEN_READONLY | OPEN_READWRITE | OPEN_CREATE | OPEN_FULLMUTEX;

/**
 * How long a statement waits for another connection's lock, ms. node-sqlite3 waits 1 s on its thread pool, while the
 * other connection (a Sequelize transaction's, on the same thread) may commit; better-sqlite3 would wait on the only
 * thread, where that commit cannot run: it fails at once with SQLITE_BUSY, a Sequelize `TimeoutError`.
 */
const BUSY_TIMEOUT_MS = 0;

/**
 * node-sqlite3's `this` in query callbacks. Sequelize reads `lastID` and `changes` as own properties and checks that
 * the class is named `Statement` before it turns `lastID` into the keys of a bulk insert.
 */
class Statement {
  declare lastID?: number | string;
  declare changes?: number;
  constructor(readonly sql: string) {}
}

type OpenCallback = (error: Error | null) => void;
type QueryCallback = (this: Statement, error: Error | null, result?: unknown) => void;

/** What `exactSqliteDialect()` returns: the node-sqlite3 module shape Sequelize's `dialectModule` takes. @publicApi */
export interface ExactSqliteDialect {
  /** node-sqlite3's `Database`, as Sequelize constructs it: `new Database(storage, mode, callback)`. */
  readonly Database: new (filename: string, mode?: number, callback?: (error: Error | null) => void) => object;
  /** Open flag for `dialectOptions.mode`, with node-sqlite3's value: read only. */
  readonly OPEN_READONLY: number;
  /** Open flag: read and write (Sequelize's default, with `OPEN_CREATE`). */
  readonly OPEN_READWRITE: number;
  /** Open flag: create the file if it is missing. */
  readonly OPEN_CREATE: number;
  /** Open flag, accepted and without effect: one better-sqlite3 connection is used by one thread. */
  readonly OPEN_FULLMUTEX: number;
}

/** The node-sqlite3 module shape over `Native`, better-sqlite3's `Database` class. @internal */
export function sqlite3Shaped(Native: NativeDatabaseClass): ExactSqliteDialect {
  class Database extends EventEmitter {
    /** Read by Sequelize: a `:memory:` connection is kept when released. */
    readonly filename: string;
    readonly #native: NativeDatabase | undefined;
    #open: boolean;

    constructor(filename: string, mode?: number | OpenCallback, callback?: OpenCallback) {
      super();
      const flags = typeof mode === 'number' ? mode : OPEN_READWRITE | OPEN_CREATE | OPEN_FULLMUTEX;
      const done = typeof mode === 'function' ? mode : callback;
      this.filename = filename;
      let failure: Error | null = null;
      try {
        this.#native = openNative(Native, filename, flags);
      } catch (error) {
        failure = error as Error;
      }
      this.#open = failure === null;
      // node-sqlite3 opens on its thread pool and answers later; Sequelize relies on it, reading the connection it
      // is assigning from inside the callback.
      process.nextTick(() => {
        if (done !== undefined) done.call(this, failure);
        else if (failure !== null) this.emit('error', failure);
        if (failure === null) this.emit('open');
      });
    }

    /** Whether the connection is open, as node-sqlite3's `open`. */
    get open(): boolean {
      return this.#open;
    }

    /** Statements already run one at a time, in the order they are called: nothing to switch. */
    serialize(callback?: () => void): this {
      callback?.();
      return this;
    }

    parallelize(callback?: () => void): this {
      callback?.();
      return this;
    }

    run(sql: string, ...parameters: unknown[]): this {
      return this.#query('run', sql, parameters);
    }

    all(sql: string, ...parameters: unknown[]): this {
      return this.#query('all', sql, parameters);
    }

    get(sql: string, ...parameters: unknown[]): this {
      return this.#query('get', sql, parameters);
    }

    close(callback?: (error: Error | null) => void): void {
      let failure: Error | null = null;
      try {
        this.#native?.close();
        this.#open = false;
      } catch (error) {
        failure = error as Error;
      }
      process.nextTick(() => {
        if (callback !== undefined) callback.call(this, failure);
        else if (failure !== null) this.emit('error', failure);
        if (failure === null) this.emit('close');
      });
    }

    /**
     * Runs the statement now, in call order, and answers on a later tick as node-sqlite3 does. `all` and `get` of a
     * statement that returns no rows (BEGIN, CREATE TABLE, which Sequelize sends through `all`) run it and answer
     * no rows, where better-sqlite3 would throw. A SQL string of several statements fails, where node-sqlite3 would
     * run the first one only.
     */
    #query(method: 'run' | 'all' | 'get', sql: string, parameters: unknown[]): this {
      const callback =
        typeof parameters.at(-1) === 'function' ? (parameters.pop() as QueryCallback | undefined) : undefined;
      const statement = new Statement(sql);
      let result: unknown;
      let failure: Error | null = null;
      try {
        if (this.#native === undefined || !this.#open) throw new Error('SQLITE_MISUSE: Database is closed');
        const prepared = this.#native.prepare(sql);
        const bound = bindParameters(parameters);
        if (method === 'run' || !prepared.reader) {
          const info = prepared.run(...bound);
          if (method === 'run') {
            statement.lastID = readInteger(BigInt(info.lastInsertRowid));
            statement.changes = info.changes;
          }
          result = method === 'all' ? [] : undefined;
        } else if (method === 'all') {
          result = prepared.all(...bound).map(readRow);
        } else {
          const row = prepared.get(...bound);
          result = row === undefined ? undefined : readRow(row);
        }
      } catch (error) {
        failure = error as Error;
      }
      process.nextTick(() => {
        if (callback === undefined) {
          if (failure !== null) this.emit('error', failure);
        } else if (method === 'run') callback.call(statement, failure);
        else callback.call(statement, failure, result);
      });
      return this;
    }
  }

  return { Database, OPEN_READONLY, OPEN_READWRITE, OPEN_CREATE, OPEN_FULLMUTEX };
}

/** Opens `filename` with node-sqlite3's `flags` as better-sqlite3's options, reading integers as bigints. */
function openNative(Native: NativeDatabaseClass, filename: string, flags: number): NativeDatabase {
  if ((flags & ~SUPPORTED_FLAGS) !== 0) {
    throw new Error(
      `SQLite open flags 0x${flags.toString(16)}: only OPEN_READONLY, OPEN_READWRITE, OPEN_CREATE and ` +
        'OPEN_FULLMUTEX are supported over better-sqlite3 (no OPEN_URI, OPEN_SHAREDCACHE or OPEN_PRIVATECACHE).',
    );
  }
  const native = new Native(filename, {
    readonly: (flags & OPEN_READWRITE) === 0,
    fileMustExist: (flags & OPEN_CREATE) === 0,
    timeout: BUSY_TIMEOUT_MS,
  });
  native.defaultSafeIntegers(true);
  return native;
}
