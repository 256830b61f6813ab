import { Test } from '@nestjs/testing';
import { IdService } from 'nestjs-snowflake';
import { ManualClock, SnowflakeTestingModule } from 'nestjs-snowflake/testing';
import { PostIds } from '../src/post-ids.service';

describe('PostIds under the test runner', () => {
  it('issues IDs from nestjs-snowflake/testing on the clock the test fixed', async () => {
    const fixedAt = Date.UTC(2026, 0, 1);
    const moduleRef = await Test.createTestingModule({
      imports: [SnowflakeTestingModule.forRoot({ clock: new ManualClock({ fixedAt }), workerId: 7 })],
      providers: [PostIds],
    }).compile();
    const posts = moduleRef.get(PostIds);
    const [first, second] = [posts.next(), posts.next()];
    expect(second > first).toBe(true);
    expect(posts.issuedAt(first)).toBe(fixedAt);
    expect(moduleRef.get(IdService).decode(first).workerId).toBe(7);
    await moduleRef.close();
  });
});
