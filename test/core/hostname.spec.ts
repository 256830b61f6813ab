import { SnowflakeConfigError } from '../../lib/core/errors.js';
import { workerIdFromHostname } from '../../lib/worker/static.source.js';

describe('workerIdFromHostname', () => {
  it.each([
    ['api-3', 3],
    ['api-0', 0],
    ['my-svc-12', 12],
    ['orders-api-12', 12],
    ['api-1023', 1023],
  ])('reads the StatefulSet pod %s as worker %i', (hostname, workerId) => {
    expect(workerIdFromHostname(hostname)).toBe(workerId);
  });

  it.each([
    ['worker42', 'a trailing number without a dash'],
    ['a1b2c3d4e5f6', "Docker's default host name (a container ID)"],
    ['api-7d9f8b6c5-x2k45', 'a Deployment pod, whose suffix is random'],
    ['api-7d9f8b6c5-x2k4', 'a Deployment pod'],
    ['web-007', 'an ordinal with leading zeros'],
    ['api-00', 'an ordinal with leading zeros'],
    ['api', 'no number'],
    ['api-', 'an empty ordinal'],
    ['-3', 'an empty name'],
    ['', 'an empty host name'],
    ['api-3.example.com', 'a domain name after the ordinal'],
    ['api-3.api.default.svc.cluster.local', 'a FQDN'],
    ['3-api', 'a leading number'],
    ['api-3 ', 'trailing white space'],
  ])('rejects %p (%s) with a config error naming workerId and the fix', (hostname) => {
    let error: unknown;
    try {
      workerIdFromHostname(hostname);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SnowflakeConfigError);
    const { option, message } = error as SnowflakeConfigError;
    expect(option).toBe('workerId');
    expect(message).toContain(JSON.stringify(hostname));
    expect(message).toMatch(/StatefulSet pod name/);
    expect(message).toMatch(/"api-3"/);
    expect(message).toMatch(/`hostname`/);
    expect(message).toMatch(/set `workerId` to a number/);
    expect(message).toMatch(/Redis lease/);
  });
});
