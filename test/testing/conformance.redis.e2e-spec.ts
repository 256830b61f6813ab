/**
 * The Redis lease keeps the worker-ID source contract, as `nestjs-snowflake/testing` checks it, against a real
 * redis-server: one `it()` per case of the suite.
 */
import { conformanceCases } from '../../lib/testing.js';
import { redisLeaseFactory } from '../support/redis-lease-factory.js';
import { sharedRedisUrl } from '../support/shared-redis.js';

const factory = redisLeaseFactory(sharedRedisUrl());

afterAll(async () => {
  await factory.close();
});

describe(`the worker-ID source contract: ${factory.name}`, () => {
  const cases = conformanceCases(factory);

  it('offers every fault the suite injects, so that no case is left out', () => {
    expect(cases.filter((c) => c.notApplicable !== undefined).map((c) => c.name)).toEqual([]);
  });

  it.each(cases.map((c) => [c.name, c]))(
    '%s',
    async (_name, testCase) => {
      await testCase.run();
    },
    60_000,
  );
});
