/**
 * The lease's lifecycle as one value. Only the coordinator (RedisWorkerSource) changes it, and only through
 * {@link transition}, which allows exactly the moves of {@link PHASE_TRANSITIONS}; "fenced" is not a phase but derived
 * from time: a held lease is fenced once the monotonic clock reaches its `fenceAt`.
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

export type PhaseName = LeasePhase['name'];

/**
 * Every move the lease may make, and why; any other is a bug in the coordinator. The README's diagram is generated
 * from this table ({@link phaseDiagram}) and a test holds the two equal.
 */
export const PHASE_TRANSITIONS: Readonly<Record<PhaseName, Readonly<Partial<Record<PhaseName, string>>>>> = {
  idle: { claiming: 'start', released: 'stop' },
  claiming: {
    settling: 'the namespace settles',
    held: 'claim confirmed, floor passed',
    idle: 'bootstrap failed',
    released: 'stop',
  },
  settling: {
    settling: 'still settling',
    claiming: 'settling over',
    idle: 'bootstrap failed',
    released: 'stop',
  },
  held: { lost: 'renewal: lost', switching: 'clock back beyond the tolerance', released: 'stop' },
  lost: { settling: 'the namespace settles', held: 're-claimed', released: 'stop' },
  switching: { settling: 'the namespace settles', held: 're-claimed', released: 'stop' },
  released: {},
};

/** The next phase, when the table allows the move. @throws Error naming the move otherwise */
export function transition(from: LeasePhase, to: LeasePhase): LeasePhase {
  if (PHASE_TRANSITIONS[from.name][to.name] === undefined) {
    throw new Error(`lease phase ${from.name} → ${to.name} is not an allowed transition`);
  }
  return to;
}

/** The phase machine as a Mermaid state diagram, one line per allowed move (self-moves left out). */
export function phaseDiagram(): string {
  const lines = ['stateDiagram-v2', '    [*] --> idle'];
  for (const [from, moves] of Object.entries(PHASE_TRANSITIONS)) {
    for (const [to, why] of Object.entries(moves)) {
      if (to !== from) lines.push(`    ${from} --> ${to}: ${why}`);
    }
  }
  lines.push('    released --> [*]');
  return lines.join('\n');
}
