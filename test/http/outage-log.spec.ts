import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SequenceExhaustedError, WorkerUnavailableError } from '../../lib/core/errors.js';
import { OutageLog } from '../../lib/http/outage-log.js';

afterEach(() => {
  jest.useRealTimers();
});

describe('OutageLog: the 503s of an outage, summed up', () => {
  it('logs 200 refused requests in a handful of lines, with the counts, and says when 503s stop', async () => {
    jest.useFakeTimers();
    const lines: string[] = [];
    const logger = {
      log: (m: string) => lines.push(`log ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: () => undefined,
    };
    const outages = new OutageLog(logger, 10_000);
    for (let i = 0; i < 150; i++) outages.record(new WorkerUnavailableError('fenced', 'worker ID 3'));
    for (let i = 0; i < 50; i++) outages.record(new SequenceExhaustedError(3, 1));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^warn Answered 503: WorkerUnavailableError: .*worker ID 3.*summed up every 10 s/);
    expect(lines[1]).toMatch(/^warn Answered 503: SequenceExhaustedError: /);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(lines[2]).toBe(
      'warn 200 requests answered 503 in the last 10 s (WorkerUnavailableError (fenced): 150, SequenceExhaustedError: 50)',
    );
    outages.record(new WorkerUnavailableError('fenced'));
    await jest.advanceTimersByTimeAsync(10_000);
    expect(lines[3]).toBe('warn 1 requests answered 503 in the last 10 s (WorkerUnavailableError (fenced): 1)');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(lines[4]).toBe('log No request answered 503 in the last 10 s: IDs are issued again');
    expect(lines).toHaveLength(5);
    // A new outage starts with its own first line again.
    outages.record(new WorkerUnavailableError('fenced'));
    expect(lines[5]).toMatch(/^warn Answered 503: WorkerUnavailableError/);
  });
});
