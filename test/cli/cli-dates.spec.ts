/**
 * The dates `range` reads: one strict grammar (Unix milliseconds, ISO 8601 dates, date-times with their offset), each
 * naming an instant that exists. Anything else is a usage mistake, never a guess.
 */
import { dateOf, instantOf } from '../../lib/cli/cli-dates.js';
import { UsageError } from '../../lib/cli/usage.error.js';

describe('the dates of the command line', () => {
  it.each([
    ['2026-11-23', Date.UTC(2026, 10, 23)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['2026-11-23T12:00Z', Date.UTC(2026, 10, 23, 12)],
    ['2026-11-23T12:00:05Z', Date.UTC(2026, 10, 23, 12, 0, 5)],
    ['2026-11-23T12:00:05.1Z', Date.UTC(2026, 10, 23, 12, 0, 5, 100)],
    ['2026-11-23T12:00:05.123+02:30', Date.UTC(2026, 10, 23, 9, 30, 5, 123)],
    ['2026-11-23T00:00-05:00', Date.UTC(2026, 10, 23, 5)],
    ['1764000000000', 1764000000000],
    ['0', 0],
  ])('reads %j', (text, ms) => {
    expect(instantOf(text)).toBe(ms);
  });

  it('reads a year below 100 as written, not as 19xx', () => {
    expect(new Date(instantOf('0050-03-01')!).toISOString()).toBe('0050-03-01T00:00:00.000Z');
  });

  it.each([
    'x 2026',
    'foo 1',
    '\u0661\u0662\u0663\u0664',
    '2026-02-30',
    '2025-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-11-23T24:00Z',
    '2026-11-23T12:60Z',
    '2026-11-23T12:00:60Z',
    '2026-11-23T12:00',
    '2026-11-23T12:00:00.1234Z',
    '2026-11-23T12:00+24:00',
    '2026-11-23 12:00Z',
    '2026-11-23t12:00z',
    '+002026-11-23',
    '26-11-23',
    'Mon, 23 Nov 2026 12:00:00 GMT',
    '1e12',
    '-1',
    ' 1764000000000',
    '0x10',
    '99999999999999999',
    '',
  ])('refuses %j with a UsageError', (text) => {
    expect(instantOf(text)).toBeUndefined();
    expect(() => dateOf('--from', text)).toThrow(UsageError);
  });

  it('names a long input without repeating it', () => {
    try {
      dateOf('--from', 'x'.repeat(1_000_000));
      throw new Error('expected a UsageError');
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message.length).toBeLessThan(400);
    }
  });
});
