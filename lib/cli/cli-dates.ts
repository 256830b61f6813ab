import { describeInput } from '../core/describe-input.js';
import { UsageError } from './usage.error.js';

/**
 * The instants the command line reads, and nothing else (these bounds end up in `WHERE id BETWEEN`, so a guess would
 * silently move a query):
 * - Unix milliseconds: ASCII digits only;
 * - an ISO 8601 date, `YYYY-MM-DD`, read as midnight UTC;
 * - an ISO 8601 date-time with its offset, `YYYY-MM-DDTHH:MM[:SS[.sss]]` then `Z` or `±HH:MM`: without an offset the
 *   instant would depend on the machine's time zone.
 * Every field must exist: no 2026-02-30, no hour 24, no second 60.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:(Z)|([+-])(\d{2}):(\d{2})))?$/;
const UNIX_MS = /^[0-9]+$/;
/** The last instant a Date holds. */
const MAX_DATE_MS = 8.64e15;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A date from the command line, read by the grammar above. @throws UsageError naming the option and the grammar */
export function dateOf(option: string, text: string | undefined): Date {
  if (text === undefined) throw new UsageError(`${option}: required`);
  const ms = instantOf(text);
  if (ms === undefined) {
    throw new UsageError(
      `${option}: not a date: ${describeInput(text)}. Expected Unix milliseconds (digits), an ISO 8601 date ` +
        '(2026-11-23, midnight UTC) or date-time with its offset (2026-11-23T12:00:00Z, 2026-11-23T13:00+01:00) ' +
        'that exists.',
    );
  }
  return new Date(ms);
}

/** The Unix milliseconds `text` stands for, or undefined when it is not in the grammar or names no real instant. */
export function instantOf(text: string): number | undefined {
  if (UNIX_MS.test(text)) {
    const ms = Number(text);
    return ms <= MAX_DATE_MS ? ms : undefined;
  }
  const match = DATE_TIME.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((field) => Number(field ?? 0));
  const millisecond = match[7] === undefined ? 0 : Number(match[7].padEnd(3, '0'));
  const hasTime = match[4] !== undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hasTime && (hour > 23 || minute > 59 || second > 59)) return undefined;
  let offsetMinutes = 0;
  if (match[9] !== undefined) {
    const offsetHours = Number(match[10]);
    const offsetMins = Number(match[11]);
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // Date.UTC reads years 0 to 99 as 1900 to 1999; setUTCFullYear takes the year as written.
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millisecond));
  date.setUTCFullYear(year);
  const ms = date.getTime() - offsetMinutes * 60_000;
  return Math.abs(ms) <= MAX_DATE_MS ? ms : undefined;
}

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}
