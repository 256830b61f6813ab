import type { Clock } from '../core/clock.js';

/**
 * A clock for tests: the real time (or a fixed start) plus an offset the test moves. `step()` moves the wall clock
 * only, as NTP steps a machine's clock; `advance()` moves both readings, as time passing does. Pass `fixedAt` to
 * freeze it at that instant until the test moves it.
 *
 * @publicApi
 */
export class ManualClock implements Clock {
  private wallOffsetMs = 0;
  private monoOffsetMs = 0;
  private readonly frozenAt: number | undefined;
  private readonly frozenMono: number;

  constructor(options: { fixedAt?: Date | number; offsetMs?: number } = {}) {
    this.frozenAt = options.fixedAt === undefined ? undefined : Number(options.fixedAt);
    this.frozenMono = performance.now();
    this.wallOffsetMs = options.offsetMs ?? 0;
  }

  now(): number {
    return (this.frozenAt ?? Date.now()) + this.wallOffsetMs;
  }

  monotonicNow(): number {
    return (this.frozenAt === undefined ? performance.now() : this.frozenMono) + this.monoOffsetMs;
  }

  /** Steps the wall clock by `ms` (negative: back); the monotonic clock does not move. */
  step(ms: number): this {
    this.wallOffsetMs += ms;
    return this;
  }

  /** Lets `ms` pass on both clocks (for a frozen clock; a running one advances by itself too). */
  advance(ms: number): this {
    this.wallOffsetMs += ms;
    this.monoOffsetMs += ms;
    return this;
  }

  /** How far the wall clock stands from the time underneath it, ms. */
  get offsetMs(): number {
    return this.wallOffsetMs;
  }
}
