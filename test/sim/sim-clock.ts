import type { Clock } from '../../lib/core/clock.js';

/** A process's clocks: the true time with an offset, a rate error and steps; the monotonic one may stop. */
export class SimClock implements Clock {
  private wallBase: number;
  private wallAt: number;
  wallPpm = 0;
  private monoBase = 0;
  private monoAt: number;
  monoPpm = 0;
  private frozen = false;

  constructor(
    private readonly trueNow: () => number,
    readonly skewMs: number,
  ) {
    this.wallAt = this.monoAt = trueNow();
    this.wallBase = this.wallAt + skewMs;
  }

  now(): number {
    const t = this.trueNow();
    return Math.floor(this.wallBase + (t - this.wallAt) * (1 + this.wallPpm / 1e6));
  }

  monotonicNow(): number {
    if (this.frozen) return this.monoBase;
    const t = this.trueNow();
    return this.monoBase + (t - this.monoAt) * (1 + this.monoPpm / 1e6);
  }

  step(byMs: number): void {
    this.rebase();
    this.wallBase += byMs;
  }

  setRate(clock: 'wall' | 'mono', ppm: number): void {
    this.rebase();
    if (clock === 'wall') this.wallPpm = ppm;
    else this.monoPpm = ppm;
  }

  freeze(frozen: boolean): void {
    this.rebase();
    this.frozen = frozen;
  }

  /** Back to the true time plus the constant skew, at the true rate (NTP after the faults). */
  heal(): void {
    this.frozen = false;
    this.rebase();
    this.wallBase = this.trueNow() + this.skewMs;
    this.wallPpm = this.monoPpm = 0;
  }

  private rebase(): void {
    const t = this.trueNow();
    this.wallBase = this.now();
    this.wallAt = t;
    this.monoBase = this.monotonicNow();
    this.monoAt = t;
  }
}
