/**
 * The generator's bit packing: an ID is `[timestamp][datacenter][worker][sequence][shard]`, with the shifts
 * precomputed as bigints once per layout. The shard field stays 0 here: a call's shard bits are or-ed in after.
 */
import type { Layout } from './layout.js';

/** The shifts of a layout, and the IDs and nodes they pack. */
export class IdBits {
  private readonly timestampShift: bigint;
  private readonly sequenceShift: bigint;
  private readonly workerShift: bigint;
  private readonly datacenterShift: bigint;
  /** One step of the sequence in the ID: `1 << sequenceShift`, past the shard field. */
  readonly step: bigint;

  constructor(layout: Layout) {
    this.timestampShift = BigInt(layout.timestampShift);
    this.sequenceShift = BigInt(layout.sequenceShift);
    this.workerShift = BigInt(layout.workerShift);
    this.datacenterShift = BigInt(layout.datacenterShift);
    this.step = 1n << this.sequenceShift;
  }

  /** The datacenter and worker fields of an ID. */
  node(datacenterId: number, workerId: number): bigint {
    return (BigInt(datacenterId) << this.datacenterShift) | (BigInt(workerId) << this.workerShift);
  }

  /** The ID of timestamp `t` (ticks), `node` (from {@link node}) and `sequence`, in shard 0. */
  id(t: number, node: bigint, sequence: number): bigint {
    const id = (BigInt(t) << this.timestampShift) | node;
    return sequence === 0 ? id : id | (BigInt(sequence) << this.sequenceShift);
  }
}
