/**
 * The Redis server's clock as this process sees it, and the check that the wall clock agrees with it.
 *
 * Every script reply carries the server's time. A round trip sent at wall `w1` / monotonic `m1` and answered at
 * `w2` / `m2` with server time `s` gives the offset `(w1 + w2) / 2 - s`, wrong by at most half the round trip. The
 * best such measurement (the smallest error) is kept as an anchor, and the server's time at any later moment is
 * projected from it on the monotonic clock, which no one steps. Comparing the wall clock the generator reads with
 * that projection sees a step of the wall clock at once, on the next ID from another time unit (a step that leaves
 * the clock in the unit of the last ID issues nothing new), not at the next renewal.
 */
export class ServerClock {
  private anchorServerMs = Number.NaN;
  private anchorMono = 0;
  private anchorErrorMs = Number.POSITIVE_INFINITY;
  private anchorRunId = '';
  /** The offset and error of the last round trip, for status reports. */
  lastOffsetMs: number | null = null;
  lastErrorMs: number | null = null;

  constructor(
    /** The most the wall clock may differ from the server's, error included. */
    readonly boundMs: number,
    /** After this long an anchor is replaced by the next measurement even if that one is less precise. */
    private readonly maxAnchorAgeMs: number,
  ) {}

  /** Records one round trip; returns the offset (wall minus server) and its error. */
  observe(
    sent: { wall: number; mono: number },
    received: { wall: number; mono: number },
    serverMs: number,
    runId: string,
  ): { offsetMs: number; errorMs: number } {
    const errorMs = Math.max(0, (received.mono - sent.mono) / 2);
    const offsetMs = (sent.wall + received.wall) / 2 - serverMs;
    const mono = (sent.mono + received.mono) / 2;
    const stale = mono - this.anchorMono > this.maxAnchorAgeMs;
    // Another Redis process (a failover) has another clock: its measurements start afresh.
    if (errorMs <= this.anchorErrorMs || stale || runId !== this.anchorRunId) {
      this.anchorServerMs = serverMs;
      this.anchorMono = mono;
      this.anchorErrorMs = errorMs;
      this.anchorRunId = runId;
    }
    this.lastOffsetMs = Math.round(offsetMs);
    this.lastErrorMs = Math.ceil(errorMs);
    return { offsetMs, errorMs };
  }

  /** Whether a measured offset and error are within the bound. */
  accepts(offsetMs: number, errorMs: number): boolean {
    return Math.abs(offsetMs) + errorMs <= this.boundMs;
  }

  /**
   * How far the wall clock reading `wallMs` stands from the server's clock projected to monotonic `mono`, plus the
   * anchor's error; `Infinity` before the first measurement. Issue only while it is within {@link boundMs}.
   */
  skewMs(wallMs: number, mono: number): number {
    if (Number.isNaN(this.anchorServerMs)) return Number.POSITIVE_INFINITY;
    return Math.abs(wallMs - (this.anchorServerMs + (mono - this.anchorMono))) + this.anchorErrorMs;
  }

  /** The wall clock's offset from the server's, projected to now (for reports). */
  offsetNow(wallMs: number, mono: number): number | null {
    if (Number.isNaN(this.anchorServerMs)) return null;
    return Math.round(wallMs - (this.anchorServerMs + (mono - this.anchorMono)));
  }
}
