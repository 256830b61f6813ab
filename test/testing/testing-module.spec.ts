import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { IdService, InvalidPublicIdError } from '../../lib/index.js';
import { ManualClock, SnowflakeTestingModule } from '../../lib/testing.js';

describe('SnowflakeTestingModule and ManualClock, for apps’ own tests', () => {
  it('issues on a static worker at the instant the test fixes, and follows the clock it moves', async () => {
    const at = Date.UTC(2026, 5, 1);
    const clock = new ManualClock({ fixedAt: at });
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeTestingModule.forRoot({ clock, workerId: 3 })],
    }).compile();
    await moduleRef.init();
    const ids = moduleRef.get(IdService);
    const first = ids.decode(ids.next());
    expect(first).toMatchObject({ timestamp: at, workerId: 3 });
    clock.advance(1500);
    expect(ids.decode(ids.next()).timestamp).toBe(at + 1500);
    expect(ids.status()).toMatchObject({ source: 'static', ready: true });
    await moduleRef.close();
  });

  it('takes publicIds, whose time check reads the clock the test moves', async () => {
    const at = Date.UTC(2026, 5, 1);
    const clock = new ManualClock({ fixedAt: at });
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeTestingModule.forRoot({ clock, publicIds: { keys: ['testing-key-0123456789abcdef'] } })],
    }).compile();
    await moduleRef.init();
    const ids = moduleRef.get(IdService);
    const id = ids.next();
    expect(ids.fromPublicId(ids.toPublicId(id))).toBe(id);
    // An ID an hour ahead of the test's clock was never issued: refused until the clock gets there.
    const ahead = ids.toPublicId(ids.compose({ timestamp: at + 3_600_000 }));
    expect(() => ids.fromPublicId(ahead)).toThrow(InvalidPublicIdError);
    clock.advance(3_600_000);
    expect(ids.fromPublicId(ahead)).toBe(ids.compose({ timestamp: at + 3_600_000 }));
    await moduleRef.close();
  });

  it('steps the wall clock without moving the monotonic one', () => {
    const clock = new ManualClock({ fixedAt: 1_000_000 });
    const mono = clock.monotonicNow();
    clock.step(-400);
    expect(clock.now()).toBe(999_600);
    expect(clock.monotonicNow()).toBe(mono);
    clock.advance(100);
    expect(clock.now()).toBe(999_700);
    expect(clock.monotonicNow()).toBe(mono + 100);
  });
});
