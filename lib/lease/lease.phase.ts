/**
 * The lease's lifecycle as one value. Only the coordinator (RedisWorkerSource) changes it; "fenced" is not a phase
 * but derived from time: a held lease is fenced once the monotonic clock reaches its `fenceAt`.
 *
 *   idle ─start→ claiming ─→ held ─renewal: lost→ lost ─re-claim→ held
 *                  │  ↑        │ └─clock back→ switching ─re-claim→ held
 *                  ↓  │        └─stop→ released
 *                settling      (any phase) ─stop→ released
 */

/** A lease this process holds. Times named `…Ms` are the holder's ID-time (the generator's wall clock). */
export interface HeldLease {
  id: number;
  token: string;
  marker: string;
  workerId: number;
  datacenterId: number;
  /** The previous holder's ceiling (or this process's own mark) the lease must stay above; null for none. */
  floorMs: number | null;
  ceilingMs: number;
  /** The ceiling in layout ticks, what the permit hands the generator. */
  ceilingTicks: number;
  /** Monotonic ms at which the holder stops issuing unless a renewal succeeds first. */
  fenceAt: number;
  /** Redis server ms at which the lease lapses. */
  serverExpiry: number;
  /**
   * The record's revision as of the last answered claim or renewal, and the last one a renewal sent: a record that
   * shows neither was rolled back.
   */
  rev: number;
  sentRev: number;
  /** Ends the process-wide tracking of this ID, keeping the last timestamp as the process's own mark. */
  untrack: (finalMs: number) => void;
}

export type LeasePhase =
  | { name: 'idle' }
  | { name: 'claiming' }
  /** Redis lost the namespace's data: no claim succeeds before `untilMono`. */
  | { name: 'settling'; untilMono: number }
  | { name: 'held'; lease: HeldLease }
  /** The lease was lost (or fenced past recovery): re-claiming. */
  | { name: 'lost' }
  /** The clock stepped back beyond the tolerance: giving the ID back and claiming another. */
  | { name: 'switching' }
  | { name: 'released' };

/** Whether a held lease may have lapsed: its fence time has come. */
export function isFenced(lease: HeldLease, monoNow: number): boolean {
  return monoNow >= lease.fenceAt;
}
