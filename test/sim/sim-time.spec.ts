/**
 * The simulator's timers keep Node's rules, so that the code under simulation waits as it would in Node: a delay
 * below 1 ms (or none, or not a number) is 1 ms. And a run whose timers loop without end stops with a violation,
 * the same at every replay, instead of holding the search.
 */
import { describe, expect, it } from '@jest/globals';
import { nodeDelay, SimTime, TimerStorm } from './sim-time.js';
import { runSchedule, type Schedule } from './world.js';

describe("the simulator's timers", () => {
  it('take a delay as Node does: below 1 ms, none, not a number or past 2^31 - 1 ms is 1 ms', () => {
    expect([0, 0.3, -5, NaN, undefined, '', 'x', 2 ** 31].map(nodeDelay)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect([1, 1.5, 20, '30', 2 ** 31 - 1].map(nodeDelay)).toEqual([1, 1.5, 20, 30, 2 ** 31 - 1]);
  });

  it('move a wait for a remainder below 1 ms on by a whole millisecond', async () => {
    const time = new SimTime(1_795_608_000_000);
    time.install();
    try {
      let fired = 0;
      setTimeout(() => fired++, 0.25);
      setTimeout(() => fired++);
      await time.advanceTo(1_795_608_000_000.5);
      expect(fired).toBe(0);
      await time.advanceTo(1_795_608_000_001);
      expect(fired).toBe(2);
    } finally {
      time.uninstall();
    }
  });

  it('stop a loop of timers that does not end with a TimerStorm, at the same timer every time', async () => {
    const stormAt = async () => {
      const time = new SimTime(0, 10_000);
      time.install();
      try {
        const again = (): void => void setTimeout(again, 1);
        again();
        await time.advanceTo(1_000_000);
        return undefined;
      } catch (error) {
        return error;
      } finally {
        time.uninstall();
      }
    };
    const first = await stormAt();
    expect(first).toBeInstanceOf(TimerStorm);
    expect(first).toEqual(await stormAt());
    expect((first as TimerStorm).fired).toBe(10_001);
  });

  // Found by a long search (seed 90367): a monotonic clock running 301 ppm slow left the claim's wait for its floor a
  // remainder of a few thousandths of its last sleep, again and again; with that remainder as the delay, simulated
  // time crept by ever smaller steps until they fell below a double's resolution, and the run stood still.
  const slowClockWait: Schedule = {
    seed: 9,
    holders: [{ skewMs: 65 }, { skewMs: -74 }, { skewMs: 96 }, { skewMs: -76 }],
    faultWindowMs: 30_000,
    sentinels: false,
    faults: [
      { at: 11, kind: 'migrate', ms: 53, batch: 2 },
      { at: 6749, kind: 'delete', keys: [0] },
      { at: 29_988, kind: 'deploy', offsets: [21, 146, 242, 1], downs: [400, 208, 7, 396] },
      { at: 12, kind: 'rate', holder: 3, clock: 'mono', ppm: -301 },
      { at: 27_923, kind: 'deploy', offsets: [68, 155, 400, 131], downs: [400, 205, 7, 377] },
      { at: 9510, kind: 'partition', holder: 1, ms: 65, way: 'requests' },
      { at: 29_987, kind: 'delete', keys: [0, 5] },
    ],
  };

  it('run a wait on a slow clock to its end: the schedule that once stood still passes', async () => {
    const result = await runSchedule(slowClockWait);
    expect(result.violation).toBeUndefined();
    expect(result.ids).toBeGreaterThan(1000);
  });
});
