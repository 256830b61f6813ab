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
