/**
 * Public IDs: their options, the checks of the options, and {@link publicIdForm}, which builds a form from them. How a
 * public ID is written and read is in `public-id.codec.ts`.
 */
import { describeInput } from '../core/describe-input.js';
import { checkClock, systemClock, type Clock } from '../core/clock.js';
import { SnowflakeConfigError } from '../core/errors.js';
import type { SnowflakeIdForm } from '../core/id-form.js';
import { resolveLayout, type Layout, type LayoutOptions, type LayoutPresetName } from '../core/layout.js';
import { rejectUnknownKeys } from '../core/option-checks.js';
import { BASE32, BASE62, FixedWidthDigits, bitsIn, widthFor, type Alphabet } from './alphabet.js';
import { checkPrefix } from './prefix.js';
import { PublicIds } from './public-id.codec.js';
import { deriveKeys } from './public-id.keys.js';

/**
 * Options of public IDs: those of {@link publicIdForm} without the layout and clock, which the module supplies.
 *
 * @publicApi
 */
export interface PublicIdOptions {
  /**
   * Secrets of at least 16 bytes (strings, read as UTF-8, or bytes), such as the output of `openssl rand -base64 32`.
   * The first writes public IDs; all of them read. Rotate in two deployments: add the new key last (every instance
   * reads it), then move it first (instances write with it); drop an old key only once its public IDs are out of
   * circulation.
   */
  keys: readonly (string | Uint8Array)[];
  /** The digits of the text. @default 'base32' */
  alphabet?: 'base32' | 'base62';
  /** A type prefix, written before the public ID with an underscore (`user_…`). */
  prefix?: string;
  /**
   * Redundancy bits: a made-up or altered public ID passes the check with probability 2^-checkBits (less with the
   * time check). 0 to 32. @default the fewest of at least 10 that fill the text's last character (12 for base32 on
   * 63 bits, 14 for base62)
   */
  checkBits?: number;
  /**
   * How far ahead of the reader's clock the time of a decoded ID may lie; a later one was never issued, and the
   * value is refused. `Infinity` turns the check off. @default 60000
   */
  maxFutureMs?: number;
  /**
   * Also read the public IDs that versions before the key covered the layout wrote (their key was derived from the
   * prefix, alphabet and widths only). They keep their key tag, so each public ID is read by one derivation, and the
   * bound on forgeries stays as it is; but such an old public ID is read by any app with the same key and prefix,
   * whatever its layout. Set `false` once they are out of circulation. @default true
   */
  readLegacyIds?: boolean;
}

/**
 * Options of {@link publicIdForm}.
 *
 * @publicApi
 */
export interface PublicIdFormOptions extends PublicIdOptions {
  /** The layout of the IDs: its bits set the width, its epoch and time unit the time check. */
  layout: Layout | LayoutPresetName | LayoutOptions;
  /** The clock of the time check. @default systemClock */
  clock?: Clock;
}

const PUBLIC_ID_KEYS: readonly string[] = Object.keys({
  keys: 0,
  alphabet: 0,
  prefix: 0,
  checkBits: 0,
  maxFutureMs: 0,
  readLegacyIds: 0,
} satisfies Record<keyof PublicIdOptions, 0>);

const ALPHABETS: Readonly<Record<string, Alphabet>> = { base32: BASE32, base62: BASE62 };
const DEFAULT_MIN_CHECK_BITS = 10;
const MAX_CHECK_BITS = 32;
const DEFAULT_MAX_FUTURE_MS = 60_000;

/**
 * A public-ID form and what it is made of, for the module and for documents.
 *
 * @publicApi
 */
export interface PublicIdForm extends SnowflakeIdForm {
  readonly name: 'public';
  readonly pattern: string;
  /** The characters of every public ID of this form, prefix included. */
  readonly length: number;
  /** The redundancy bits: a forged value passes with probability 2^-checkBits, or less. */
  readonly checkBits: number;
}

/**
 * Public IDs: opaque, fixed-width texts that hide when an ID was issued and how many were, so that the bigint
 * primary key stays internal. Each is `[prefix_]` + a key tag (one character) + a keyed pseudorandom permutation of
 * the ID followed by `checkBits` zero bits, written in base32 (or base62) of fixed width: consecutive IDs give
 * unrelated public IDs, and only the keys turn one back.
 *
 * Reading refuses, with {@link InvalidPublicIdError}: a tag no configured key has (always), and otherwise a value
 * whose decoded check bits are not zero or whose ID's time lies more than `maxFutureMs` ahead of the clock (a forged
 * or altered value passes both with probability 2^-checkBits times the share of the layout's time range that lies
 * before now + maxFutureMs). Characters outside the alphabet, the wrong length or prefix are refused with
 * `InvalidSnowflakeTextError` and their position.
 *
 * @example
 * const form = publicIdForm({ keys: [process.env.PUBLIC_ID_KEY!], layout: 'twitter', prefix: 'user' });
 * const text = form.format(id); // 'user_' + 16 characters
 * form.parse(text) === id;
 * @publicApi
 */
export function publicIdForm(options: PublicIdFormOptions): PublicIdForm {
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError('publicIds', "expected options such as { keys: [secret], layout: 'twitter' }.");
  }
  const { layout, clock, ...rest } = options;
  return createPublicIdForm(rest, isResolved(layout) ? layout : resolveLayout(layout), clock ?? systemClock, '');
}

/** A layout from `resolveLayout()` or `IdService.layout`, rather than options to resolve. */
function isResolved(layout: PublicIdFormOptions['layout']): layout is Layout {
  return typeof layout === 'object' && layout !== null && typeof (layout as Partial<Layout>).maxId === 'bigint';
}

/**
 * Builds a public-ID form from validated parts; `path` prefixes option names in errors (`publicIds.` in the module).
 *
 * @throws SnowflakeConfigError naming the option and the fix
 * @internal
 */
export function createPublicIdForm(options: PublicIdOptions, layout: Layout, clock: Clock, path: string): PublicIdForm {
  const at = (key: string) => `${path}${key}`;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new SnowflakeConfigError(
      path.replace(/\.$/, '') || 'publicIds',
      'expected an object such as { keys: [secret] }.',
    );
  }
  rejectUnknownKeys(path.replace(/\.$/, ''), options, PUBLIC_ID_KEYS, 'Public IDs');
  const alphabetName = options.alphabet ?? 'base32';
  const alphabet = Object.hasOwn(ALPHABETS, alphabetName) ? ALPHABETS[alphabetName] : undefined;
  if (alphabet === undefined) {
    throw new SnowflakeConfigError(
      at('alphabet'),
      `expected 'base32' or 'base62', got ${describeInput(alphabetName)}.`,
    );
  }
  const head = checkPrefix(at('prefix'), options.prefix);
  const idBits = layout.totalBits;
  const checkBits = options.checkBits ?? defaultCheckBits(alphabet, idBits);
  if (!Number.isInteger(checkBits) || checkBits < 0 || checkBits > MAX_CHECK_BITS) {
    throw new SnowflakeConfigError(
      at('checkBits'),
      `expected an integer from 0 to ${MAX_CHECK_BITS}, got ${describeInput(checkBits)}.`,
    );
  }
  // At most 63 + 32 bits: within the permutation's 96.
  const blockBits = idBits + checkBits;
  const maxFutureMs = options.maxFutureMs ?? DEFAULT_MAX_FUTURE_MS;
  if (typeof maxFutureMs !== 'number' || Number.isNaN(maxFutureMs) || maxFutureMs < 0) {
    throw new SnowflakeConfigError(
      at('maxFutureMs'),
      `expected a non-negative number of milliseconds (Infinity turns the time check off), got ${describeInput(maxFutureMs)}.`,
    );
  }
  const readLegacyIds = options.readLegacyIds ?? true;
  if (typeof readLegacyIds !== 'boolean') {
    throw new SnowflakeConfigError(at('readLegacyIds'), `expected true or false, got ${describeInput(readLegacyIds)}.`);
  }
  checkClock(clock);
  const digits = new FixedWidthDigits(alphabet, blockBits);
  const widths = `${alphabet.name}/${head}/${idBits}/${checkBits}`;
  const keys = deriveKeys(at('keys'), options.keys, alphabet, {
    bound: `${widths}/${layoutDomain(layout)}`,
    legacy: readLegacyIds ? widths : undefined,
  });
  return new PublicIds(alphabet, head, digits, keys, checkBits, layout, clock, maxFutureMs);
}

/**
 * Every field of the layout, epoch and time unit included: two layouts that differ in any of them give an ID's bits
 * another meaning, so a public ID of one must not read as an ID of the other.
 */
function layoutDomain(layout: Layout): string {
  const { epoch, timeUnitMs, timestampBits, datacenterBits, workerBits, sequenceBits, shardBits } = layout;
  return `layout/${epoch}/${timeUnitMs}/${timestampBits}/${datacenterBits}/${workerBits}/${sequenceBits}/${shardBits}`;
}

/** The fewest check bits, at least {@link DEFAULT_MIN_CHECK_BITS}, that leave no bit of the last character unused. */
function defaultCheckBits(alphabet: Alphabet, idBits: number): number {
  return bitsIn(alphabet, widthFor(alphabet, idBits + DEFAULT_MIN_CHECK_BITS)) - idBits;
}
