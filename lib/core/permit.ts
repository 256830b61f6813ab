/**
 * The worker-ID source's answer to "may I issue timestamp t now?". A static worker ID needs none; the Redis lease
 * implements it to enforce its ceiling and to fence itself when the lease may have lapsed.
 *
 * The generator calls {@link IssuePermit.ceiling} before the first ID of every time unit it issues from (a new unit,
 * a unit borrowed while the clock stands behind, the first ID after an assignment), not before each further ID of a
 * unit already allowed: a permit bounds timestamps, and a unit it allowed once stays allowed. To stop issuing at once
 * (a lease lost), a source assigns the generator another permit (`WorkerSourceContext.reassign`), which the very next
 * call asks. Implementations must still be cheap: on a layout of 1 ms units they are asked up to 1,000 times a second.
 */
export interface IssuePermit {
  /**
   * The highest timestamp, in layout ticks, that may be issued right now.
   *
   * @param nowMs the wall-clock reading the generator is about to issue from, so that the source can check it
   *   (the Redis lease compares it with the Redis server's clock)
   * @throws WorkerUnavailableError when nothing may be issued (the lease is fenced, lost or being switched)
   */
  ceiling(nowMs: number): number;
  /** Told when the clock has run past the ceiling, so the source can raise it sooner than planned. */
  ceilingReached?(): void;
}

/** What a generator without a permit may issue up to: no ceiling. */
const NO_CEILING = Number.MAX_SAFE_INTEGER;

/**
 * The permit's ceiling for a clock reading `now`, or none without a permit.
 *
 * ASKED_ONCE_PER_UNIT: the generator asks the permit only when a call would issue from a time unit other than
 * `last`, the unit of the last issued ID (a new unit, a clock behind `last`, a used-up sequence, the first ID
 * after an assignment). A call that continues the sequence of `last` is not asked. That is safe because every
 * uniqueness rule of the lease bounds a *timestamp*, not a moment:
 * - the floor (a later holder issues strictly above the ceiling recorded in Redis) and a loss's note compare
 *   timestamps; `last` was at most the confirmed ceiling when the permit allowed it, so a later holder stays
 *   above it however late this process issues more IDs in that unit;
 * - settling after a data loss and the time check bound the timestamps a holder from before the loss can issue:
 *   `last` passed the fence and the clock check at the moment the permit allowed it, and that moment is all the
 *   bound uses (`resolveClockBounds` in lease.settings.ts: the fence margin covers the clock bound on both sides,
 *   the clock-back tolerance and one unit), so a new holder's first timestamp lies above it;
 * - a loss, a switch and a stop never wait for the next ID: they assign the generator a refusing permit, and an
 *   assignment marks the sequence used up, so the very next call asks the permit and is refused.
 * What skipping the check allows is therefore only more IDs (higher sequences) in a unit already allowed, at most
 * `2^sequenceBits` of them, which no holder before or after can issue. A unit not yet issued always asks.
 */
export function ceilingOf(permit: IssuePermit | undefined, now: number): number {
  return permit === undefined ? NO_CEILING : permit.ceiling(now);
}
