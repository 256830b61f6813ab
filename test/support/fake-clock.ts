import type { Clock } from '../../lib/core/clock.js';

/**
 * A wall clock the test moves by hand. It can also advance by itself every `everyReads` reads, which lets a
 * generator that waits for the next time unit see time pass without real time passing.
 */
export class FakeClock implements Clock {
  /** How many times `now()` was called. */
  reads = 0;
  private ms: number;
  private stepMs = 0;
  private everyReads = 0;
  private sinceStep = 0;

  constructor(startMs: number) {
    this.ms = startMs;
  }

  now(): number {
    this.reads++;
    if (this.everyReads > 0 && ++this.sinceStep >= this.everyReads) {
      this.sinceStep = 0;
      this.ms += this.stepMs;
    }
    return this.ms;
  }

  /** The current time, without counting as a read. */
  peek(): number {
    return this.ms;
  }

  set(ms: number): this {
    this.ms = ms;
    return this;
  }

  advance(ms: number): this {
    this.ms += ms;
    return this;
  }

  back(ms: number): this {
    this.ms -= ms;
    return this;
  }

  /** Advance `stepMs` after every `everyReads` reads; `autoAdvance(0, 0)` freezes the clock. */
  autoAdvance(stepMs: number, everyReads: number): this {
    this.stepMs = stepMs;
    this.everyReads = everyReads;
    this.sinceStep = 0;
    return this;
  }
}
