/**
 * Simulated time for the lease simulator: the global timers (`setTimeout`, `setInterval` and their clears) and
 * `Date.now` replaced by a scheduler driven by hand, so that the real lease code waits on simulated time.
 *
 * Why not jest's (sinon's) fake timers: they fake the whole `Date`, keep a clock object per call and, in their async
 * advance, work through a loop of bookkeeping per timer; a hand-driven heap that drains the microtasks each fired timer
 * started (through one `process.nextTick`) before the next does the same job for less. The order is the timers' (due time, then
 * creation order), so a seed replays the same run.
 *
 * `performance.now`, `process.nextTick` and `queueMicrotask` stay real: the simulated processes read their clocks
 * from injected clocks only, and microtasks need no time.
 */

/** One pending timer; the handle the code gets back (it may `unref()` it or pass it to `clearTimeout`). */
class SimTimer {
  cancelled = false;

  constructor(
    readonly id: number,
    public at: number,
    readonly callback: (...args: unknown[]) => void,
    readonly args: unknown[],
    readonly intervalMs: number | undefined,
  ) {}

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  hasRef(): boolean {
    return false;
  }

  refresh(): this {
    return this;
  }

  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

/**
 * A timer's delay as Node sets it (lib/internal/timers.js): below 1 ms, above 2^31 - 1 ms or not a number, 1 ms. A
 * loop that waits out a remainder below 1 ms thus moves on in Node; with the remainder as the delay, simulated time
 * crept forward by ever smaller steps (a clock running slow left a remainder of a few thousandths of its last wait)
 * until the steps fell below a double's resolution at this time of day, and the run stood still.
 */
export function nodeDelay(ms: unknown): number {
  const delay = Number(ms);
  return delay >= 1 && delay <= TIMEOUT_MAX_MS ? delay : 1;
}

const TIMEOUT_MAX_MS = 2 ** 31 - 1;

/**
 * Timers one run may fire: a schedule fires about 700, so far beyond that the run is in a loop of timers (a retry
 * without back-off, a wait that never ends) and stops with {@link TimerStorm}, the same at every replay.
 */
const MAX_TIMERS_PER_RUN = 2_000_000;

/** A run that fired more timers than any schedule needs: reported as a violation (liveness) with its seed. */
export class TimerStorm extends Error {
  constructor(
    readonly fired: number,
    readonly atMs: number,
  ) {
    super(`${fired} timers fired by ${atMs} ms of simulated time: a loop of timers that does not end`);
  }
}

type TimerGlobals = Pick<typeof globalThis, 'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval'>;

export class SimTime {
  private current: number;
  private readonly heap: SimTimer[] = [];
  private nextId = 1;
  private saved: (TimerGlobals & { dateNow: () => number }) | undefined;
  private readonly realSetImmediate = globalThis.setImmediate;
  /** Errors thrown by timer callbacks (the first is rethrown by {@link advanceTo}). */
  private thrown: unknown[] = [];
  /** Timers fired so far. */
  fired = 0;

  constructor(
    startMs: number,
    private readonly maxTimers = MAX_TIMERS_PER_RUN,
  ) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Puts the simulated timers and `Date.now` in place of the real ones until {@link uninstall}. */
  install(): void {
    if (this.saved !== undefined) return;
    const g = globalThis as unknown as Record<string, unknown>;
    this.saved = {
      setTimeout: globalThis.setTimeout,
      clearTimeout: globalThis.clearTimeout,
      setInterval: globalThis.setInterval,
      clearInterval: globalThis.clearInterval,
      dateNow: Date.now,
    };
    g.setTimeout = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      this.add(callback, nodeDelay(ms), args, undefined);
    g.setInterval = (callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      this.add(callback, nodeDelay(ms), args, nodeDelay(ms));
    g.clearTimeout = g.clearInterval = (timer: unknown) => {
      if (timer instanceof SimTimer) timer.cancelled = true;
    };
    Date.now = () => this.current;
  }

  /** The real timers back; the simulated ones left pending are dropped. */
  uninstall(): void {
    const saved = this.saved;
    if (saved === undefined) return;
    const g = globalThis as unknown as Record<string, unknown>;
    g.setTimeout = saved.setTimeout;
    g.clearTimeout = saved.clearTimeout;
    g.setInterval = saved.setInterval;
    g.clearInterval = saved.clearInterval;
    Date.now = saved.dateNow;
    this.saved = undefined;
    this.heap.length = 0;
  }

  /**
   * Fires every timer due up to `target` in order (time, then creation), letting the promises each one starts settle
   * before the next, then sets the time to `target`.
   */
  async advanceTo(target: number): Promise<void> {
    await this.settle();
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || top.at > target) break;
      this.pop();
      if (top.cancelled) continue;
      this.current = Math.max(this.current, top.at);
      if (top.intervalMs !== undefined) {
        top.at = this.current + top.intervalMs;
        this.push(top);
      }
      if (++this.fired > this.maxTimers) throw new TimerStorm(this.fired, this.current);
      try {
        top.callback(...top.args);
      } catch (error) {
        this.thrown.push(error);
      }
      await this.settle();
    }
    this.current = Math.max(this.current, target);
    if (this.thrown.length > 0) {
      const [first] = this.thrown;
      this.thrown = [];
      throw first;
    }
  }

  /**
   * Lets every microtask queued so far (and those they queue) run. Promise chains started by a timer may be any number
   * of reactions deep, so counting `await`s would cut some short. Node runs the `process.nextTick` queue only once
   * V8's microtask queue is empty, so a tick resolves this after every reaction the timer started, at any depth; the
   * code under simulation queues no ticks and no macrotasks of its own (its timers are these). A real macrotask turn
   * (`setImmediate`) did the same through a whole turn of the event loop, about a tenth of the simulator's time
   * (most of it in the poll phase).
   */
  private settle(): Promise<void> {
    return new Promise((resolve) => process.nextTick(resolve));
  }

  /**
   * One real macrotask turn, so that the event loop (signals, the test runner's timers and output) runs between
   * schedules: {@link settle} never leaves the microtask queues.
   */
  yieldToEventLoop(): Promise<void> {
    return new Promise((resolve) => this.realSetImmediate(resolve));
  }

  private add(
    callback: (...args: unknown[]) => void,
    delay: number,
    args: unknown[],
    intervalMs: number | undefined,
  ): SimTimer {
    const timer = new SimTimer(this.nextId++, this.current + delay, callback, args, intervalMs);
    this.push(timer);
    return timer;
  }

  // A binary heap on (at, id): the id keeps timers due at the same time in the order they were set.
  private less(a: SimTimer, b: SimTimer): boolean {
    return a.at < b.at || (a.at === b.at && a.id < b.id);
  }

  private push(timer: SimTimer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  private pop(): SimTimer | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && this.less(heap[l], heap[m])) m = l;
        if (r < heap.length && this.less(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  }
}
