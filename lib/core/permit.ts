/**
 * The worker-ID source's answer to "may I issue timestamp t now?". A static worker ID needs none; the Redis lease
 * implements it to enforce its ceiling and to fence itself when the lease may have lapsed.
 *
 * The generator calls {@link IssuePermit.ceiling} before every ID, so implementations must be cheap.
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
