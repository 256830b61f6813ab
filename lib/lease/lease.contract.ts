/**
 * The numbers a namespace's safety argument uses, and the bounds that hold whatever an instance is configured with.
 *
 * A namespace records its contract (layout, TTL, fence margin, clock-back tolerance, clock bound) and refuses an
 * instance that brings another one. A data loss erases the record, so the first script after a loss cannot know
 * the fleet's numbers: whatever it brings must not shorten settling. Settling therefore lasts
 * {@link SETTLE_AFTER_LOSS_MS} whoever starts it, and every instance's TTL and clock bound stay below the limits
 * that make that enough:
 *
 * A holder H from before the loss issues its last ID before its fence, `ttl_H - margin_H` after it sent its last
 * confirmed renewal (earlier than the loss at `t0`), with a timestamp at most `off_H + tol_H` ahead of the server's
 * clock. A holder N that claims after settling issues from `t0 + SETTLE` with timestamps at least `off_N` behind it.
 * N stays above H when `SETTLE - ttl_H + margin_H - off_H - tol_H - reserve > off_N`. Every instance has
 * `margin >= tol + 2 off + unit + reserve` (checked at bootstrap), so the left side is at least
 * `SETTLE - ttl_H + off_H + unit`, and with `ttl <= MAX_TTL_MS` and `off <= MAX_CLOCK_OFFSET_MS` it exceeds `off_N`:
 * `SETTLE_AFTER_LOSS_MS >= MAX_TTL_MS + MAX_CLOCK_OFFSET_MS`, with a second to spare for drift over the settling.
 */

/** The longest `redis.ttlMs`: settling after a loss must outlast every holder's fence, whatever its settings. */
export const MAX_TTL_MS = 10_000;

/** The largest `redis.maxClockOffsetMs`. */
export const MAX_CLOCK_OFFSET_MS = 1_000;

/** How long a namespace settles after its marker is created (first use, or any loss), whoever creates it. */
export const SETTLE_AFTER_LOSS_MS = 12_000;

/**
 * The longest a claim waits for a namespace to take its new layout (layout-change.lua.ts): with the defaults, about
 * four seconds after the last lease of the old one ended suffice when only the worker and sequence fields changed; a
 * layout whose IDs lie below the old ones for longer (a later epoch, a coarser unit) is refused with
 * `LeaseLayoutChangeError`.
 */
export const LAYOUT_CHANGE_MAX_WAIT_MS = 12_000;

/**
 * The drift rate the reserve allows between a holder's monotonic clock and the Redis server's clock (500 ppm:
 * ordinary quartz is within 100 ppm; a VM's clock after a host migration can be worse for a while).
 */
export const DRIFT_PPM = 500;

/**
 * What the clock arithmetic keeps in reserve beyond the inequality: 1 ms for `TIME` rounded down to the
 * millisecond, and the drift of {@link DRIFT_PPM} over the longest window a holder relies on its monotonic clock
 * for (one TTL between confirmed renewals).
 */
export function clockReserveMs(ttlMs: number): number {
  return 1 + Math.ceil((ttlMs * DRIFT_PPM) / 1_000_000);
}

/** The numbers of a namespace's contract. */
export interface ContractNumbers {
  ttlMs: number;
  fenceMarginMs: number;
  clockBackToleranceMs: number;
  maxClockOffsetMs: number;
}

/**
 * The contract as recorded in Redis (`HGET …:meta config`) and shown in errors: every number the safety argument
 * uses, and the layout (a reused ID's floor only covers IDs of the same layout). Two instances of a namespace must
 * produce the same string.
 */
export function contractOf(
  numbers: ContractNumbers,
  layout: {
    timestampBits: number;
    datacenterBits: number;
    workerBits: number;
    sequenceBits: number;
    shardBits: number;
    timeUnitMs: number;
    epoch: number;
  },
): string {
  const { timestampBits, datacenterBits, workerBits, sequenceBits, shardBits, timeUnitMs, epoch } = layout;
  const shard = shardBits > 0 ? `/${shardBits}` : '';
  return (
    `ttlMs=${numbers.ttlMs} fenceMarginMs=${numbers.fenceMarginMs} ` +
    `clockBackToleranceMs=${numbers.clockBackToleranceMs} maxClockOffsetMs=${numbers.maxClockOffsetMs} ` +
    `layout=${timestampBits}/${datacenterBits}/${workerBits}/${sequenceBits}${shard} unit=${timeUnitMs}ms epoch=${epoch}`
  );
}

/** The fields on which two contracts differ, for the mismatch error: `ttlMs: namespace 10000, this instance 1000`. */
export function contractDifferences(recorded: string, given: string): string[] {
  const parse = (text: string) => new Map(text.split(' ').map((part) => part.split('=') as [string, string]));
  const a = parse(recorded);
  const b = parse(given);
  const keys = [...new Set([...a.keys(), ...b.keys()])];
  return keys
    .filter((key) => a.get(key) !== b.get(key))
    .map((key) => `${key}: namespace ${a.get(key) ?? 'none'}, this instance ${b.get(key) ?? 'none'}`);
}
