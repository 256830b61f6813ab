import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { workerIdFromHostname } from '../../lib/worker/static.source.js';

describe('workerIdFromHostname', () => {
  it.each([
    ['api-3', 3],
    ['api-0', 0],
    ['orders-api-12', 12],
    ['web-007', 7],
    ['worker42', 42],
  ])('reads %s as worker %i', (hostname, workerId) => {
    expect(workerIdFromHostname(hostname)).toBe(workerId);
  });

  it.each([['api'], ['api-'], [''], ['api-3.example.com'], ['3-api']])(
    'rejects %p, which has no trailing number, with a config error naming workerId',
    (hostname) => {
      let error: unknown;
      try {
        workerIdFromHostname(hostname);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SnowflakeConfigError);
      expect((error as SnowflakeConfigError).option).toBe('workerId');
      expect((error as SnowflakeConfigError).message).toMatch(/StatefulSet/);
      expect((error as SnowflakeConfigError).message).toContain(JSON.stringify(hostname));
    },
  );
});
