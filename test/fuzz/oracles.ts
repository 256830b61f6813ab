/**
 * What each reader should do, written from the README's rules rather than from the code: the fuzz suite holds every
 * surface to these.
 */
import type { Layout } from '../../lib/core/layout.js';

/** An error message never repeats its input: at most this many characters, whatever the input. */
export const MAX_MESSAGE_CHARS = 512;

/**
 * A raw ID (README, "IDs in requests"): a string of ASCII digits (leading zeros read), a safe-integer number that is
 * not negative (and not -0), or a bigint that is not negative; in every case no wider than the layout.
 * Undefined when the value is refused.
 */
export function rawIdOracle(value: unknown, layout: Pick<Layout, 'maxId'>): bigint | undefined {
  let id: bigint;
  if (typeof value === 'string') {
    if (!/^[0-9]+$/.test(value)) return undefined;
    const significant = value.replace(/^0+/, '');
    if (significant.length > 20) return undefined;
    id = BigInt(value);
  } else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0 || Object.is(value, -0)) return undefined;
    id = BigInt(value);
  } else if (typeof value === 'bigint') {
    id = value;
  } else {
    return undefined;
  }
  return id >= 0n && id <= layout.maxId ? id : undefined;
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A fixed-width text (README, "String forms"): exactly `width` digits of the alphabet after the prefix (base32 in
 * either case, without i, l, o, u; base62 case-sensitive), whose value fits `bits`. Undefined when refused.
 */
export function fixedWidthOracle(
  value: unknown,
  alphabet: 'base32' | 'base62',
  bits: number,
  prefix = '',
): bigint | undefined {
  if (typeof value !== 'string' || !value.startsWith(prefix)) return undefined;
  const body = value.slice(prefix.length);
  const digits = alphabet === 'base32' ? CROCKFORD : BASE62;
  const radix = BigInt(digits.length);
  let width = 1;
  while (radix ** BigInt(width) < 1n << BigInt(bits)) width++;
  if (body.length !== width) return undefined;
  let id = 0n;
  for (const character of body) {
    const index = digits.indexOf(alphabet === 'base32' ? character.toLowerCase() : character);
    if (index < 0 || character.length !== 1) return undefined;
    id = id * radix + BigInt(index);
  }
  return id < 1n << BigInt(bits) ? id : undefined;
}

/**
 * A date of the command line (README, "Command line"): Unix milliseconds as ASCII digits, `YYYY-MM-DD` (midnight UTC),
 * or `YYYY-MM-DDTHH:MM[:SS[.s to .sss]]` with `Z` or `±HH:MM`; the day, the time and the offset must exist.
 */
export function dateOracle(text: string): number | undefined {
  if (/^[0-9]+$/.test(text)) {
    const ms = Number(text);
    return ms <= 8.64e15 ? ms : undefined;
  }
  const match = /^(\d\d\d\d)-(\d\d)-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,3}))?)?(Z|[+-]\d\d:\d\d))?$/.exec(text);
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((field) => Number(field ?? '0'));
  const fraction = Number((match[7] ?? '0').padEnd(3, '0'));
  // A calendar check of its own: a real day survives a trip through Date's fields unchanged.
  const probe = new Date(0);
  probe.setUTCFullYear(year, month - 1, day);
  if (probe.getUTCFullYear() !== year || probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day) {
    return undefined;
  }
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  const zone = match[8];
  if (zone !== undefined && zone !== 'Z') {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(4, 6));
    if (hours > 23 || minutes > 59) return undefined;
    offset = (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  const ms = probe.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offset;
  return Math.abs(ms) <= 8.64e15 ? ms : undefined;
}
