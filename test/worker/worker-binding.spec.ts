/**
 * The binding between a worker-ID source and the generator, on a fake clock: what the generator's sequence and
 * last timestamp do when an assignment arrives, so that no ID of a worker repeats across a start, a switch or a
 * re-claim.
 */
import type { LoggerService } from '@nestjs/common';
import { SnowflakeCodec } from '../../lib/core/codec.js';
import { WorkerUnavailableError, WorkerWaitTimeoutError } from '../../lib/core/errors.js';
import { SnowflakeGenerator } from '../../lib/core/generator.js';
import type { SequenceStart } from '../../lib/core/generator.options.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { IdService } from '../../lib/module/id.service.js';
import { StaticWorkerSource } from '../../lib/worker/static.source.js';
import { WorkerBinding } from '../../lib/worker/worker-binding.js';
import { FakeClock } from '../support/fake-clock.js';
import { StubWorkerSource } from '../support/stub-worker-source.js';

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

describe('WorkerBinding: a worker ID handed in again', () => {
  async function started(sequenceStart: SequenceStart) {
    const clock = new FakeClock(START);
    const generator = new SnowflakeGenerator({ layout: twitter, clock, sequenceStart, random: () => 0.25 });
    const binding = new WorkerBinding(
      generator,
      new StubWorkerSource({ kind: 'hand', workerId: 3 }),
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

describe('WorkerBinding: the wait for a worker ID is bounded whatever the source does', () => {
  it("ends a source's wait that ignores the signal, at the bound, with the source's refusal in the error", async () => {
    const binding = new WorkerBinding(
      new SnowflakeGenerator({ layout: twitter, clock: new FakeClock(START) }),
      // Its worker ID is refused by its permit, and its whenReady() ignores the signal and never settles.
      new StubWorkerSource({
        kind: 'deaf',
        workerId: 7,
        refusal: () => new WorkerUnavailableError('ceiling'),
        whenReady: 'deaf',
      }),
      twitter,
      new FakeClock(START),
      quiet,
      false,
      150,
    );
    await binding.start();
    const ids = new IdService(binding);
    const started = performance.now();
    const error = (await ids.nextAsync().catch((caught: unknown) => caught)) as WorkerWaitTimeoutError;
    const tookMs = performance.now() - started;
    expect(error).toBeInstanceOf(WorkerWaitTimeoutError);
    expect(error).toMatchObject({ state: 'ceiling', limitMs: 150, limitFrom: 'maxAsyncWaitMs', lastError: null });
    expect(error.message).toMatch(/the deaf worker-ID source refused: The clock ran past the ceiling/);
    expect(tookMs).toBeGreaterThanOrEqual(145);
    expect(tookMs).toBeLessThan(1000);
    // timeoutMs: 0 gives up at once; a caller's signal ends the wait with its own reason.
    await expect(ids.nextAsync({ timeoutMs: 0 })).rejects.toMatchObject({ reason: 'timeout', waitedMs: 0 });
    const reason = new Error('request closed');
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 20);
    await expect(ids.nextAsync({ signal: controller.signal, timeoutMs: 10_000 })).rejects.toBe(reason);
    await binding.stop();
  });
});
