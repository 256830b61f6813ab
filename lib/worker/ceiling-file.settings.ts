import { inspect } from 'node:util';
import { resolve } from 'node:path';
import { SnowflakeConfigError } from '../core/errors.js';
import type { Layout } from '../core/layout.js';
import { nonNegativeOption, positiveOption, rejectUnknownKeys } from '../core/option-checks.js';
import { CEILING_FILE_DEFAULTS, type CeilingFileOptions } from './ceiling-file.options.js';

/** `ceilingFile` after validation: an absolute path and every default filled in. @internal */
export interface CeilingFileSettings {
  path: string;
  aheadMs: number;
  maxWaitMs: number;
}

const KEYS: readonly string[] = Object.keys({
  path: 0,
  aheadMs: 0,
  maxWaitMs: 0,
} satisfies Record<keyof CeilingFileOptions, 0>);

/**
 * Validates option `ceilingFile` (a path, or `{ path, aheadMs?, maxWaitMs? }`), naming the option and the fix.
 *
 * @internal
 */
export function resolveCeilingFileSettings(value: string | CeilingFileOptions, layout: Layout): CeilingFileSettings {
  const options: CeilingFileOptions = typeof value === 'string' ? { path: value } : value;
  if (options === null || typeof options !== 'object') {
    throw new SnowflakeConfigError(
      'ceilingFile',
      `expected a file path or { path, aheadMs?, maxWaitMs? }, got ${inspect(value)}.`,
    );
  }
  rejectUnknownKeys('ceilingFile', options, KEYS, 'ceilingFile');
  if (typeof options.path !== 'string' || options.path.trim() === '') {
    throw new SnowflakeConfigError(
      typeof value === 'string' ? 'ceilingFile' : 'ceilingFile.path',
      `expected the path of a file on local disk, one per worker ID (such as "/var/lib/app/snowflake-worker-3.json"), ` +
        `got ${inspect(options.path)}.`,
    );
  }
  const aheadMs = positiveOption('ceilingFile.aheadMs', options.aheadMs, CEILING_FILE_DEFAULTS.aheadMs);
  // The raise falls due at half of aheadMs before the ceiling: that must be at least one time unit, or the clock
  // could pass the ceiling in the tick the raise falls due.
  if (aheadMs < 2 * layout.timeUnitMs) {
    throw new SnowflakeConfigError(
      'ceilingFile.aheadMs',
      `${aheadMs} ms is less than two of the layout's time units (${layout.timeUnitMs} ms each); ` +
        `use ${2 * layout.timeUnitMs} or more (the default is ${CEILING_FILE_DEFAULTS.aheadMs}).`,
    );
  }
  const maxWaitMs = nonNegativeOption('ceilingFile.maxWaitMs', options.maxWaitMs, CEILING_FILE_DEFAULTS.maxWaitMs);
  return { path: resolve(options.path), aheadMs, maxWaitMs };
}
