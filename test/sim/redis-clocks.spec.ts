/**
 * The Redis servers' own clocks, scripted. The README assumes that the clocks of the Redis servers that may serve a
 * namespace agree within `maxClockOffsetMs`; the search draws them within that band (each host that serves the
 * namespace in turn has its own clock, and the serving one may step), and these schedules show both sides of the
 * assumption: within it every holder goes on issuing, none twice; beyond it the holders refuse rather than repeat.
 */
import { describe, expect, it } from '@jest/globals';
import { redisClockBandMs, runSchedule, simSettings, type Fault, type RunResult, type Schedule } from './world.js';

const holders = [{ skewMs: 0 }, { skewMs: 30 }, { skewMs: -30 }, { skewMs: 10 }];
const START = Date.UTC(2026, 10, 25, 12);

function schedule(faults: Fault[], redisSkewsMs: number[]): Schedule {
  return { seed: 11, holders, faults, faultWindowMs: 30_000, redisSkewsMs };
}

function explain(result: RunResult): string {
  return `${JSON.stringify(result.violation)}\n${result.timeline.slice(-60).join('\n')}`;
}

/**
 * The server's clock minus the true time, as each script run between `from` and `to` shows it: the timeline logs a
 * reply when the script runs, starting with the true time (ms since the start) and ending with the server's time.
 */
function serverOffsets(result: RunResult, from: number, to: number): number[] {
  const offsets: number[] = [];
  for (const line of result.timeline) {
    const match = /^\s*(\d+) ms {2}h\d#\d+ \w+ ran: (\[.*\])$/.exec(line);
    if (match === null) continue;
    const at = Number(match[1]);
    if (at < from || at >= to) continue;
    const reply = JSON.parse(match[2]) as unknown[];
    const serverMs = Number(reply[reply.length - 1]);
    offsets.push(serverMs - START - at);
  }
  return offsets;
}

describe('Redis server clocks', () => {
  const bound = simSettings().maxClockOffsetMs;
  const band = redisClockBandMs(holders);

  it('keeps the band within the assumption and the holders within reach of every Redis clock', () => {
    expect(2 * band).toBeLessThanOrEqual(bound);
    expect(band + 30).toBeLessThan(bound);
    expect(band).toBeGreaterThan(40);
    // Holders 100 ms off leave a narrower band, never an empty one.
    expect(redisClockBandMs([{ skewMs: 100 }, { skewMs: -100 }])).toBe(bound - 10 - 100);
  });

  it('within it: a promoted replica and a step each bring their own clock, and every holder issues, none twice', async () => {
    // The namespace settles until 12 s, then every holder claims. The first primary's clock runs `band` behind the true
    // time, the promoted replica's `band` ahead (the two disagree by the whole bound); right after the failover the
    // records are deleted, so that the IDs go out again by the time rule, one fence margin after their leases lapsed
    // on the new clock. Then the promoted one's clock steps back by the bound.
    const result = await runSchedule(
      schedule(
        [
          { at: 16_000, kind: 'failover', lagMs: 400, stale: [], staleMs: 0 },
          { at: 16_050, kind: 'delete', keys: [3, 4, 5, 6] },
          { at: 16_100, kind: 'kill', holder: 1, downMs: 200 },
          { at: 24_000, kind: 'redis-clock', toMs: -band },
        ],
        [-band, band],
      ),
      { trace: true },
    );
    if (result.violation !== undefined) throw new Error(explain(result));
    const near = (expected: number) => (offset: number) => Math.abs(offset - expected) <= 1;
    const before = serverOffsets(result, 0, 16_000);
    const promoted = serverOffsets(result, 16_000, 24_000);
    const stepped = serverOffsets(result, 24_000, Infinity);
    expect(before.length).toBeGreaterThan(10);
    expect(promoted.length).toBeGreaterThan(10);
    expect(stepped.length).toBeGreaterThan(10);
    expect(before.every(near(-band))).toBe(true);
    expect(promoted.every(near(band))).toBe(true);
    expect(stepped.every(near(-band))).toBe(true);
    expect(result.faultsByKind['redis-clock']).toBe(1);
  });

  it('beyond it: a promoted replica 5 s ahead makes every holder give back what it claims, and none issues twice', async () => {
    const result = await runSchedule(
      schedule(
        [
          { at: 16_000, kind: 'failover', lagMs: 0, stale: [], staleMs: 0 },
          { at: 16_050, kind: 'delete', keys: [3, 4, 5, 6] },
        ],
        [0, 5_000],
      ),
      { trace: true },
    );
    // Safety holds and liveness is lost, as the README says of a clock out of sync with Redis's: each claim on the
    // promoted node succeeds once it settled, and its holder, finding its clock 5 s from the server's, releases it.
    expect(result.violation?.kind).toBe('liveness');
    const lines = result.timeline.filter((line) => Number(line.trim().split(' ')[0]) >= 16_000);
    const claimed = lines.filter((line) => / claim ran: \["ok"/.test(line)).length;
    const released = lines.filter((line) => / release ran: \["released"/.test(line)).length;
    expect(claimed).toBeGreaterThan(8);
    expect(released).toBeGreaterThanOrEqual(claimed - 4);
  });
});
