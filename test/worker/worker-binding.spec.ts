/**
 * The binding between a worker-ID source and the generator, on a fake clock: what the generator's sequence and
 * last timestamp do when an assignment arrives, so that no ID of a worker repeats across a start, a switch or a
 * re-claim.
 */
import type { LoggerService } from '@nestjs/common';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { SnowflakeGenerator, type SequenceStart } from '../../lib/core/generator.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { StaticWorkerSource } from '../../lib/worker/static.source.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import type { WorkerAssignment, WorkerIdSource } from '../../lib/worker/worker-source.js';
import { FakeClock } from '../support/fake-clock.js';

const START = Date.UTC(2026, 10, 24, 21);
const twitter = resolveLayout('twitter', START);
const codec = new SnowflakeCodec(twitter);
const quiet: LoggerService = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

function isStrictlyIncreasing(ids: readonly bigint[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] <= ids[i - 1]) return false;
  return true;
}

describe('WorkerBinding: a fixed worker ID issues before start, then starts', () => {
  it.each<SequenceStart>(['zero', 'random', 'rotating'])(
    "never repeats an ID issued before start() in the same time unit (sequenceStart '%s')",
    async (sequenceStart) => {
      const clock = new FakeClock(START);
      const generator = new SnowflakeGenerator({ layout: twitter, clock, sequenceStart, random: () => 0.25 });
      // A service built by hand may issue before its start (the binding assigns a fixed worker ID at once).
      const binding = new WorkerBinding(
        generator,
        new StaticWorkerSource('static', 5, 1),
        twitter,
        clock,
        quiet,
        false,
      );
      const before = [generator.next(), generator.next(), generator.next()];
      await binding.start();
      clock.autoAdvance(1, 3);
      const after = [generator.next(), generator.next(), generator.next()];
      const all = [...before, ...after];
      expect(all.map((id) => codec.decode(id).workerId)).toEqual([5, 5, 5, 5, 5, 5]);
      expect(new Set(all).size).toBe(all.length);
      expect(isStrictlyIncreasing(all)).toBe(true);
      await binding.stop();
    },
  );
});

/** A source whose assignments the test hands in by hand, each with the floor the test chooses. */
class HandSource implements WorkerIdSource {
  readonly kind = 'hand';
  constructor(private readonly first: WorkerAssignment) {}
  start(): Promise<WorkerAssignment> {
    return Promise.resolve(this.first);
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
  requestSwitch(): boolean {
    return false;
  }
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
}

describe('WorkerBinding: a worker ID handed in again', () => {
  async function started(sequenceStart: SequenceStart) {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, sequenceStart, random: () => 0.25 });
    const binding = new WorkerBinding(
      generator,
      new HandSource({ workerId: 3, datacenterId: 0, floor: -1 }),
      twitter,
      clock,
      quiet,
      false,
    );
    await binding.start();
    return { clock, generator, binding };
  }

  it.each<SequenceStart>(['zero', 'random', 'rotating'])(
    "continues above its own last ID when a re-claim hands back the same ID with a lower floor (sequenceStart '%s')",
    async (sequenceStart) => {
      const { clock, generator, binding } = await started(sequenceStart);
      const before = [generator.next(), generator.next()];
      // A loss: issuing stops, then the same worker ID comes back in the same time unit with no floor of its own.
      binding.reassign(null);
      binding.reassign({ workerId: 3, datacenterId: 0, floor: -1 });
      const clockUnit = codec.decode(before[1]).timestamp;
      clock.autoAdvance(1, 3);
      const after = generator.nextBatch(3);
      const all = [...before, ...after];
      expect(new Set(all).size).toBe(all.length);
      expect(isStrictlyIncreasing(all)).toBe(true);
      expect(codec.decode(after[0]).timestamp).toBeGreaterThan(clockUnit);
    },
  );

  it('remembers the last ID of a worker ID it switched away from, when a later switch comes back to it', async () => {
    const { clock, generator, binding } = await started('zero');
    const first = [generator.next(), generator.next()];
    binding.reassign({ workerId: 4, datacenterId: 0, floor: -1 });
    const second = generator.next();
    binding.reassign({ workerId: 3, datacenterId: 0, floor: -1 });
    clock.autoAdvance(1, 3);
    const third = [generator.next(), generator.next()];
    expect(codec.decode(second).workerId).toBe(4);
    expect(third.map((id) => codec.decode(id).workerId)).toEqual([3, 3]);
    const underThree = [...first, ...third];
    expect(new Set(underThree).size).toBe(underThree.length);
    expect(isStrictlyIncreasing(underThree)).toBe(true);
  });
});

describe('WorkerBinding: a fixed worker ID started again in the same process', () => {
  it.each([
    ['started', true],
    ['built only (a service built by hand issues before start)', false],
  ])('continues above what the stopped generator issued in the same time unit: %s', async (_, start) => {
    const clock = new FakeClock(START);
    const bind = () =>
      new WorkerBinding(
        new SnowflakeGenerator({ layout: twitter, clock }),
        new StaticWorkerSource('static', 6, 2),
        twitter,
        clock,
        quiet,
      );
    const first = bind();
    await first.start();
    const before = [first.generator.next(), first.generator.next()];
    await first.stop();
    // An app closed and created again at once, its clock still in the same millisecond.
    const second = bind();
    if (start) await second.start();
    clock.autoAdvance(1, 3);
    const after = [second.generator.next(), second.generator.next()];
    await second.stop();
    const all = [...before, ...after];
    expect(all.map((id) => codec.decode(id).workerId)).toEqual([6, 6, 6, 6]);
    expect(new Set(all).size).toBe(all.length);
    expect(isStrictlyIncreasing(all)).toBe(true);
  });
});
