import type { SequenceStart } from './generator.options.js';

/**
 * Where each new time unit's sequence starts (`sequenceStart`): always 0, or an offset in the lower half of the
 * sequence, drawn at random or rotating, so that the low bits of IDs spread at low traffic (`id % N`) while a unit
 * keeps at least half its IDs.
 *
 * @internal
 */
export class SequenceStarts {
  /** Offsets a unit's sequence may start at: 0 to `span - 1`; 1 when it always starts at 0. */
  readonly span: number;
  private rotation = 0;

  constructor(
    private readonly mode: SequenceStart,
    sequenceBits: number,
    private readonly random: () => number = Math.random,
  ) {
    // The lower half of the sequence: a unit keeps at least half its IDs, and the bits below the top one even out.
    this.span = mode === 'zero' ? 1 : 2 ** (sequenceBits - 1);
  }

  /** The offset the next time unit starts at. */
  next(): number {
    if (this.span === 1) return 0;
    if (this.mode === 'rotating') return (this.rotation = (this.rotation + 1) % this.span);
    // A `random` outside [0, 1) (negative, NaN) must not put a negative or fractional offset in the sequence field.
    const offset = Math.floor(this.random() * this.span) % this.span;
    return offset >= 0 ? offset : 0;
  }
}
