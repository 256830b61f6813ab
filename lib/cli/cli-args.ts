import { parseArgs } from 'node:util';
import { cut, describeInput } from '../core/describe-input.js';
import { resolveLayout, type Layout, type LayoutOptions, type LayoutPresetName } from '../core/layout.js';
import { UsageError } from './usage.error.js';

/** Whole numbers as written in decimal: no sign, space, radix prefix, exponent or fraction (`Number()` takes all). */
const WHOLE = /^[0-9]+$/;
/** A whole number or a decimal fraction, as written: `0.1`, `5`. */
const DECIMAL = /^[0-9]+(?:\.[0-9]+)?$/;
const MAX_MESSAGE_CHARS = 200;

export const USAGE = `Usage: nestjs-snowflake <command> [options]

Commands:
  decode <id>...                      split IDs into time, datacenter, worker, sequence (and shard)
  range --from <date> --to <date>     the ID bounds for WHERE id BETWEEN <min> AND <max>; a date is Unix ms,
                                      2026-11-23 (midnight UTC) or 2026-11-23T12:00:00Z (an offset is required)
  leases --redis <url> [--namespace <ns>] [--datacenter <n>] [--low-capacity-warning <n>]
                                      who holds which worker ID in a Redis lease namespace (read-only);
                                      low: free IDs at or below redis.lowCapacityWarning (default 0.1)

Options:
  --layout <name|json>   twitter, js-safe, sharded, default (the default), or a layout as JSON, e.g. '{"workerBits":8}'
  --json                 print JSON for scripts instead of a table
  --help                 this text`;

export interface CliArgs {
  command: string;
  positionals: string[];
  layout: Layout;
  json: boolean;
  from?: string;
  to?: string;
  redis?: string;
  namespace: string;
  datacenter: number;
  /** As `redis.lowCapacityWarning`: a fraction of the namespace, or a count of free IDs. */
  lowCapacityWarning: number;
  help: boolean;
}

export function parseCli(argv: string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        layout: { type: 'string' },
        json: { type: 'boolean', default: false },
        from: { type: 'string' },
        to: { type: 'string' },
        redis: { type: 'string' },
        namespace: { type: 'string', default: 'default' },
        datacenter: { type: 'string', default: '0' },
        'low-capacity-warning': { type: 'string', default: '0.1' },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    // Node's message quotes the unknown option whole; a pasted megabyte would come back whole.
    throw new UsageError(cut((error as Error).message, MAX_MESSAGE_CHARS));
  }
  const { values, positionals } = parsed;
  const [command = '', ...rest] = positionals;
  const datacenter = WHOLE.test(values.datacenter) ? Number(values.datacenter) : NaN;
  if (!Number.isSafeInteger(datacenter)) {
    throw new UsageError(
      `--datacenter: expected a whole number in decimal digits, got ${describeInput(values.datacenter)}`,
    );
  }
  const warning = values['low-capacity-warning'];
  const lowCapacityWarning = DECIMAL.test(warning) ? Number(warning) : NaN;
  if (!Number.isFinite(lowCapacityWarning) || (lowCapacityWarning > 1 && lowCapacityWarning % 1 !== 0)) {
    throw new UsageError(
      '--low-capacity-warning: expected a fraction between 0 and 1, or a whole number of free IDs, got ' +
        describeInput(warning),
    );
  }
  if (values.redis !== undefined) redisUrlOf(values.redis);
  return {
    command,
    positionals: rest,
    layout: layoutOf(values.layout),
    json: values.json,
    from: values.from,
    to: values.to,
    redis: values.redis,
    namespace: values.namespace,
    datacenter,
    lowCapacityWarning,
    help: values.help,
  };
}

function layoutOf(text: string | undefined): Layout {
  if (text === undefined) return resolveLayout('default');
  if (text.trimStart().startsWith('{')) {
    let options: LayoutOptions;
    try {
      options = JSON.parse(text) as LayoutOptions;
    } catch (error) {
      throw new UsageError(`--layout: not valid JSON (${(error as Error).message})`);
    }
    return resolveLayout(options);
  }
  return resolveLayout(text as LayoutPresetName);
}

/**
 * `--redis`: a `redis://` or `rediss://` URL. ioredis reads an empty or odd string as options and connects to
 * localhost, which would describe another Redis than the one meant.
 */
function redisUrlOf(text: string): string {
  let protocol: string | undefined;
  try {
    protocol = new URL(text).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    throw new UsageError(`--redis: expected a redis:// or rediss:// URL, got ${describeInput(text)}`);
  }
  return text;
}
