/**
 * Where a fixed worker ID starts (StaticWorkerSource.start): in the time unit after the one it was taken in, since the
 * holder before it on the host may have issued in that unit; with a clock that does not move (a test's), at once and
 * without a floor; and never held up by a clock stepped back while it waits.
 */
import type { LoggerService } from '@nestjs/common';
import { describe, expect, it } from '@jest/globals';
import type { Clock } from '../../lib/core/clock.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { ticksAtMs } from '../../lib/core/time-units.js';
import { StaticWorkerSource } from '../../lib/worker/static.source.js';
import type { WorkerSourceContext } from '../../lib/worker/worker-source.js';

const quiet: LoggerService = { log: () => undefined, warn: () => undefined, error: () => undefined };

function context(layoutName: 'default' | 'js-safe', clock: Clock): WorkerSourceContext {
  return {
    layout: resolveLayout(layoutName),
    clock,
    logger: quiet,
    lastTimestamp: () => -1,
    reassign: () => undefined,
  };
}

async function start(layoutName: 'default' | 'js-safe', clock: Clock) {
  const began = performance.now();
  const assignment = await new StaticWorkerSource('static', 3, 0).start(context(layoutName, clock));
  return { floor: assignment.floor, tookMs: performance.now() - began };
}

describe('a fixed worker ID starts in the time unit after the one it was taken in', () => {
  it('with the real clock, on js-safe (10 ms units): the floor is the unit it was taken in, and the clock left it', async () => {
    const layout = resolveLayout('js-safe');
    for (let round = 0; round < 20; round++) {
      const before = ticksAtMs(layout, Date.now());
      const { floor } = await start('js-safe', { now: () => Date.now(), monotonicNow: () => performance.now() });
      expect(floor).toBeGreaterThanOrEqual(before);
      expect(ticksAtMs(layout, Date.now())).toBeGreaterThan(floor);
    }
  });

  it('with a clock that reads in coarse steps, it waits for the step rather than take it for a standing clock', async () => {
    // A clock of 5 ms steps stands still through most 1 ms timers; the first version took that for a test's clock.
    const coarse = { now: () => Math.floor(Date.now() / 5) * 5, monotonicNow: () => performance.now() };
    const layout = resolveLayout('default');
    for (let round = 0; round < 20; round++) {
      const { floor } = await start('default', coarse);
      expect(floor).toBeGreaterThanOrEqual(0);
      expect(ticksAtMs(layout, coarse.now())).toBeGreaterThan(floor);
    }
  });

  it('with a clock that does not move (a test’s), without a floor, after one unit and 50 ms', async () => {
    const fixed = Date.UTC(2026, 10, 26, 12);
    const { floor, tookMs } = await start('js-safe', { now: () => fixed, monotonicNow: () => 0 });
    expect(floor).toBe(-1);
    expect(tookMs).toBeLessThan(1000);
  });

  it('with a clock stepped back a minute while it waits: not held up, and with its floor', async () => {
    let reads = 0;
    const base = Date.now();
    const stepped = { now: () => (reads++ === 0 ? base : Date.now() - 60_000), monotonicNow: () => performance.now() };
    const { floor, tookMs } = await start('default', stepped);
    expect(floor).toBe(ticksAtMs(resolveLayout('default'), base));
    expect(tookMs).toBeLessThan(1000);
  });
});
