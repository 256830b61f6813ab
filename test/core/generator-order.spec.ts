import { ClockMovedBackError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { FakeClock } from '../support/fake-clock.js';

const START = Date.UTC(2026, 10, 22, 12);
const TOLERANCE_MS = 1000;
const layout = resolveLayout({ preset: 'twitter' }, START);
const EPOCH = BigInt(layout.epoch);

/**
 * 5 million IDs from one generator while a fake clock forces sequence overflow and steps back by 1 ms, 100 ms and
 * beyond the tolerance. Each ID is compared with the one before: strictly increasing implies no duplicate.
 */
describe('5 million IDs of one worker strictly increase through overflow and clock steps', () => {
  const clock = new FakeClock(START);
  const generator = new SnowflakeGenerator({
    layout,
    clock,
    workerId: 7,
    datacenterId: 3,
    clockBackToleranceMs: TOLERANCE_MS,
    // Time moves only with the fake clock's reads: a real-time bound must not fail a wait when the process is preempted.
    maxSyncWaitMs: 5_000,
  });
  let previous = -1n;
  let issued = 0;
  /** The furthest an ID's timestamp ran ahead of the clock, in ms. */
  let maxLeadMs = 0;

  /** Issues `count` IDs; returns how many were not above their predecessor (0 when all is well). */
  function issue(count: number): number {
    let violations = 0;
    for (let i = 0; i < count; i++) {
      const id = generator.next();
      if (id <= previous) violations++;
      previous = id;
      const leadMs = Number((id >> 22n) + EPOCH) - clock.peek();
      if (leadMs > maxLeadMs) maxLeadMs = leadMs;
    }
    issued += count;
    return violations;
  }

  /** The timestamp of the last issued ID, as Unix ms. */
  const lastIssuedMs = () => Number((previous >> 22n) + EPOCH);

  it('overflows the sequence every millisecond: exactly 4096 IDs per ms, no duplicates', () => {
    // 5000 clock reads per ms: more calls than sequence numbers, so each ms runs out and waits for the next.
    clock.autoAdvance(1, 5000);
    const startMs = clock.peek();
    expect(issue(1_000_000)).toBe(0);
    const elapsedMs = lastIssuedMs() - startMs;
    // 1,000,000 / 4096 = 244.1 ms: every ms of the run was filled to the cap.
    expect(elapsedMs).toBe(244);
    expect(generator.stats().overflowWaits).toBeGreaterThanOrEqual(244);
    expect(maxLeadMs).toBe(0);
  });

  it('continues above the last ID after the clock steps back 1 ms', () => {
    const before = generator.stats().clockBackEvents;
    clock.back(1);
    clock.autoAdvance(1, 2000);
    expect(issue(1_000_000)).toBe(0);
    expect(generator.stats().clockBackEvents).toBe(before + 1);
    expect(maxLeadMs).toBeGreaterThanOrEqual(1);
    expect(maxLeadMs).toBeLessThanOrEqual(TOLERANCE_MS);
  });

  it('continues above the last ID after the clock steps back 100 ms, borrowing time while overflowing', () => {
    const before = generator.stats();
    clock.back(100);
    // Overflowing while behind: the generator moves its timestamp ahead one ms at a time instead of waiting.
    clock.autoAdvance(1, 5000);
    expect(issue(1_000_000)).toBe(0);
    const after = generator.stats();
    expect(after.clockBackEvents).toBe(before.clockBackEvents + 1);
    expect(after.maxClockBackMs).toBeGreaterThanOrEqual(100);
    expect(after.overflowWaits).toBe(before.overflowWaits);
    expect(maxLeadMs).toBeGreaterThan(100);
    expect(maxLeadMs).toBeLessThanOrEqual(TOLERANCE_MS);
    // A faster clock then catches up with the borrowed time.
    clock.autoAdvance(1, 1000);
    expect(issue(500_000)).toBe(0);
    expect(clock.peek()).toBeGreaterThanOrEqual(lastIssuedMs());
  });

  it('refuses with ClockMovedBackError beyond the tolerance, then continues once the clock returns', () => {
    const lastBefore = previous;
    const returnTo = clock.peek();
    clock.back(1500);
    clock.autoAdvance(1, 100);
    for (let attempt = 0; attempt < 1000; attempt++) {
      let caught: unknown;
      try {
        previous = generator.next();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ClockMovedBackError);
      const error = caught as ClockMovedBackError;
      expect(error.toleranceMs).toBe(TOLERANCE_MS);
      expect(error.behindMs).toBeGreaterThan(TOLERANCE_MS);
    }
    expect(previous).toBe(lastBefore);
    expect(generator.stats().maxClockBackMs).toBeGreaterThanOrEqual(1490);

    clock.set(returnTo);
    clock.autoAdvance(1, 5000);
    expect(issue(1_500_000)).toBe(0);
  });

  it('issued 5 million IDs in all, none ahead of the clock by more than the tolerance', () => {
    expect(issued).toBe(5_000_000);
    expect(generator.stats().issued).toBe(5_000_000);
    expect(maxLeadMs).toBeLessThanOrEqual(TOLERANCE_MS);
    expect(generator.stats().clockBackEvents).toBe(3);
  });
});
