import type { Clocks } from '../core/clock.js';
import type { Sleeper } from './async-tools.js';

/**
 * When the next renewal runs: every renew interval, sooner after a failure (the back-off), and at once when the
 * clock runs past the ceiling or away from the server's, at most once per `earlyGapMs`.
 */
export class RenewalTimer {
  private cancel: () => void = () => undefined;
  private lastEarly = -Infinity;
  /** Set while a renewal is under way: an early renewal then adds nothing. */
  renewing = false;

  constructor(
    private readonly sleeper: Sleeper,
    private readonly clocks: Clocks,
    private readonly earlyGapMs: number,
    private readonly renew: () => void,
  ) {}

  schedule(delayMs: number): void {
    this.cancel();
    this.cancel = this.sleeper.after(delayMs, this.renew);
  }

  /** Renews now rather than at the next tick, unless one runs or ran within `earlyGapMs`. */
  early(): void {
    const now = this.clocks.monotonicNow();
    if (this.renewing || now - this.lastEarly < this.earlyGapMs) return;
    this.lastEarly = now;
    this.schedule(0);
  }

  stop(): void {
    this.cancel();
  }
}
