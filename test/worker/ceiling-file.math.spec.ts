/**
 * The arithmetic of a ceiling file on plain numbers: what is written, when the next raise falls due, and whether a
 * start may issue, waits or refuses.
 */
import { nextCeilingTicks, raiseDueMs, startDecision } from '../../lib/worker/ceiling-file.math.js';

const ms = { epoch: 1_000_000, timeUnitMs: 1 as const };
const tens = { epoch: 1_000_000, timeUnitMs: 10 as const };

describe('nextCeilingTicks', () => {
  it('lies aheadMs beyond the clock, in ticks of the layout', () => {
    expect(nextCeilingTicks(ms, 1_005_000, 4_000, 2000)).toBe(7000);
    expect(nextCeilingTicks(tens, 1_005_000, 400, 2000)).toBe(700);
  });

  it('lies aheadMs beyond the last issued timestamp when that runs ahead of a clock set back', () => {
    expect(nextCeilingTicks(ms, 1_003_000, 4_500, 2000)).toBe(6500);
    expect(nextCeilingTicks(tens, 1_003_000, 450, 2000)).toBe(650);
  });

  it('takes the clock when nothing was issued yet (last -1)', () => {
    expect(nextCeilingTicks(ms, 1_000_010, -1, 100)).toBe(110);
  });
});

describe('raiseDueMs', () => {
  it('falls marginMs before the start of the ceiling tick', () => {
    expect(raiseDueMs(ms, 7000, 1000)).toBe(1_006_000);
    expect(raiseDueMs(tens, 700, 1000)).toBe(1_006_000);
  });
});

describe('startDecision', () => {
  it('goes at once without a previous ceiling, or with the clock past it', () => {
    expect(startDecision(ms, 1_000_000, -1, 0)).toEqual({ kind: 'go' });
    expect(startDecision(ms, 1_000_501, 500, 0)).toEqual({ kind: 'go' });
    expect(startDecision(tens, 1_005_010, 500, 0)).toEqual({ kind: 'go' });
  });

  it('never goes in the ceiling tick itself: the previous run may have issued there', () => {
    expect(startDecision(ms, 1_000_500, 500, 10)).toEqual({ kind: 'wait', waitMs: 1 });
    expect(startDecision(tens, 1_005_009, 500, 10)).toEqual({ kind: 'wait', waitMs: 1 });
  });

  it('waits for the clock to pass the ceiling when that is within the bound', () => {
    expect(startDecision(ms, 1_000_300, 500, 201)).toEqual({ kind: 'wait', waitMs: 201 });
  });

  it('refuses when the clock stands further behind than the bound', () => {
    expect(startDecision(ms, 1_000_300, 500, 200)).toEqual({ kind: 'refuse', behindMs: 201 });
    expect(startDecision(ms, 1_000_300, 500, 0)).toEqual({ kind: 'refuse', behindMs: 201 });
  });
});
