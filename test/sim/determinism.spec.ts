/**
 * The simulator replays: the same seed gives the same schedule, and the same schedule gives the same run, line for
 * line (every fault, round trip, reply and ID worker change in the timeline) and figure for figure. Without this, a
 * seed printed by a failing search would not reproduce the failure.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { tuneFengari } from './lua/fengari-engine.js';
import { scheduleArbitrary, search } from './schedule.js';
import { runSchedule } from './world.js';

describe('the simulator is deterministic', () => {
  it('runs a generated schedule twice to the same timeline and figures', async () => {
    const [schedule] = fc.sample(scheduleArbitrary({ rollbacks: true }), { seed: 11, numRuns: 1 });
    expect(schedule.faults.length).toBeGreaterThan(0);
    const first = await runSchedule(schedule, { trace: true });
    const second = await runSchedule(schedule, { trace: true });
    expect(first.timeline.length).toBeGreaterThan(100);
    expect(second.timeline).toEqual(first.timeline);
    expect({ ...second, timeline: [] }).toEqual({ ...first, timeline: [] });
    // Tracing changes nothing but the timeline.
    const untraced = await runSchedule(schedule);
    expect({ ...untraced, timeline: [] }).toEqual({ ...first, timeline: [] });
  });

  it('reads no clock but the injected ones: a frozen or a racing performance.now() changes nothing', async () => {
    // The renewal timer once measured its early-renewal gap on performance.now() (its clocks were taken before
    // start() injected the app's); a replay then depended on the real time of the run.
    const [schedule] = fc.sample(scheduleArbitrary({ rollbacks: true }), { seed: 11, numRuns: 1 });
    const withPerformanceNow = async (now: () => number) => {
      const real = Object.getOwnPropertyDescriptor(performance, 'now');
      Object.defineProperty(performance, 'now', { value: now, configurable: true, writable: true });
      try {
        return await runSchedule(schedule, { trace: true });
      } finally {
        if (real === undefined) delete (performance as { now?: unknown }).now;
        else Object.defineProperty(performance, 'now', real);
      }
    };
    let racing = 0;
    const frozen = await withPerformanceNow(() => 5);
    const fast = await withPerformanceNow(() => (racing += 1000));
    expect(fast.timeline).toEqual(frozen.timeline);
  });

  it('runs the scripts the same compiled to JavaScript as in fengari, tuned or not', async () => {
    const [schedule] = fc.sample(scheduleArbitrary({ rollbacks: true }), { seed: 12, numRuns: 1 });
    const compiled = await runSchedule(schedule, { trace: true, lua: 'compiled' });
    const tuned = await runSchedule(schedule, { trace: true, lua: 'fengari' });
    tuneFengari(false);
    try {
      const stock = await runSchedule(schedule, { trace: true, lua: 'fengari' });
      expect(stock.timeline).toEqual(tuned.timeline);
    } finally {
      tuneFengari(true);
    }
    expect(compiled.scripts).toBeGreaterThan(50);
    expect(compiled.timeline).toEqual(tuned.timeline);
    expect({ ...compiled, timeline: [] }).toEqual({ ...tuned, timeline: [] });
  });

  it('searches to the same figures with either engine', async () => {
    const figures = async (lua: 'compiled' | 'fengari') => {
      const report = await search({ seconds: 600, seed: 40, maxSchedules: 12, lua });
      return { ...report, wallMs: 0 };
    };
    const compiled = await figures('compiled');
    expect(compiled.scripts).toBeGreaterThan(12 * 50);
    expect(await figures('fengari')).toEqual(compiled);
  });

  it('searches from one seed to the same figures twice', async () => {
    const figures = async () => {
      const report = await search({ seconds: 600, seed: 5, maxSchedules: 6 });
      return { ...report, wallMs: 0 };
    };
    const first = await figures();
    expect(first.schedules).toBe(6);
    expect(await figures()).toEqual(first);
  });
});
