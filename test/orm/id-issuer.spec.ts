import { ClockMovedBackError, IdService, SequenceExhaustedError, SnowflakeGenerator } from '../../lib/index.js';
import { resolveLayout } from '../../lib/core/layout.js';
import { issueOrWait, type IdIssuer, type SnowflakeIdSource } from '../../lib/orm/id-issuer.js';
import { FakeClock } from '../support/fake-clock.js';

// The one issuer interface of the ORM integrations: IdService and a bare generator both fit it.
const _fits: IdIssuer[] = [new IdService({ workerId: 1 }), new SnowflakeGenerator({ layout: resolveLayout() })];

describe('issueOrWait()', () => {
  const START = Date.UTC(2026, 0, 1);

  /** Two IDs per 10 ms on a clock that stands still, and no synchronous wait: the third ID must wait. */
  function smallGenerator(clock: FakeClock): SnowflakeGenerator {
    const layout = resolveLayout({ timeUnitMs: 10, sequenceBits: 1 }, START);
    return new SnowflakeGenerator({ layout, clock, workerId: 1, maxSyncWaitMs: 0 });
  }

  it('issues now while the sequence lasts, without a promise', () => {
    const generator = smallGenerator(new FakeClock(START + 1_000));
    const first = issueOrWait(generator);
    const second = issueOrWait(generator);
    expect(typeof first).toBe('bigint');
    expect(second).toBe((first as bigint) + 1n);
  });

  it('waits for the next time unit when the sequence is used up, and the ID lies above the ones before it', async () => {
    const clock = new FakeClock(START + 1_000);
    const generator = smallGenerator(clock);
    const before = [issueOrWait(generator), issueOrWait(generator)] as bigint[];
    const pending = issueOrWait(generator);
    expect(pending).toBeInstanceOf(Promise);
    clock.advance(10);
    const id = await pending;
    expect(id).toBeGreaterThan(before[1]);
    expect(generator.stats().issued).toBe(3);
  });

  it('throws what next() threw when the source cannot wait', () => {
    const generator = smallGenerator(new FakeClock(START + 1_000));
    const source: SnowflakeIdSource = { next: () => generator.next() };
    generator.next();
    generator.next();
    expect(() => issueOrWait(source)).toThrow(SequenceExhaustedError);
  });

  it('does not wait for a clock gone back beyond the tolerance', () => {
    const clock = new FakeClock(START + 10_000);
    const generator = smallGenerator(clock);
    generator.next();
    clock.back(5_000);
    expect(() => issueOrWait(generator)).toThrow(ClockMovedBackError);
  });
});
